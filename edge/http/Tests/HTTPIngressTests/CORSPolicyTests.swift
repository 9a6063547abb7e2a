import EventBus
import EventBusTesting
import Foundation
import HTTPIngress
import Testing

/// `--cors-origin`: which browser pages of other origins may call the ingress.
@Suite(.serialized) struct CORSPolicyTests {
    @Test func onlyTheListedOriginsAreAllowed() throws {
        let policy = try CORSPolicy(origins: ["http://127.0.0.1:8090", "https://chat.example.com"])
        #expect(policy.allowedOrigin(for: "https://chat.example.com") == "https://chat.example.com")
        #expect(policy.allowedOrigin(for: "https://evil.example.com") == nil)
        #expect(policy.allowedOrigin(for: nil) == nil)
        #expect(policy.headers(origin: "https://evil.example.com", preflight: true).isEmpty)
        let preflight = policy.headers(origin: "http://127.0.0.1:8090", preflight: true)
        #expect(preflight[.accessControlAllowHeaders]?.contains("Authorization") == true)
        #expect(preflight[.accessControlAllowHeaders]?.contains("Last-Event-ID") == true)
        #expect(preflight[.vary] == "Origin")
        #expect(CORSPolicy.none.allowedOrigin(for: "http://127.0.0.1:8090") == nil)
        #expect(try CORSPolicy(origins: ["*"]).allowedOrigin(for: "http://anywhere:1") == "*")
    }

    @Test func anythingButAnOriginIsRefused() {
        for origin in ["", "127.0.0.1:8090", "http://", "http://host/path", "ftp://host"] {
            #expect(throws: IngressError.self, "\(origin)") { try CORSPolicy(origins: [origin]) }
        }
    }

    /// The real server: a preflight of the stream with an app token's headers, the stream's
    /// answer, and the same from an origin not listed.
    @Test func theServerAnswersAPreflightAndMarksItsAnswersForTheListedOrigin() async throws {
        let up = try UpProcess()
        try await up.start()
        try await up.terminateAfter {
            let page = "http://127.0.0.1:8090"
            let ingress = try IngressProcess(command: up.commandEndpoint, arguments: ["--cors-origin", page])
            try await ingress.start()
            let url = ingress.baseURL + "/v1/stream"
            let preflight = try await HTTPExchange.send(url, method: "OPTIONS", headers: [
                "Origin": page, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization, last-event-id",
            ])
            #expect(preflight.status == 204, "\(preflight.text)")
            #expect(preflight.headers["access-control-allow-origin"] == page)
            #expect(preflight.headers["access-control-allow-headers"]?.contains("Authorization") == true)
            let stream = try await HTTPExchange.send(url + "?after=0", method: "GET", headers: ["Origin": page], stream: true)
            #expect(stream.status == 200)
            #expect(stream.headers["access-control-allow-origin"] == page)
            let problem = try await HTTPExchange.send(url + "?after=x", method: "GET", headers: ["Origin": page])
            #expect(problem.status == 400 && problem.headers["access-control-allow-origin"] == page, "errors too")

            let foreign = try await HTTPExchange.send(url, method: "OPTIONS", headers: [
                "Origin": "http://evil.example", "Access-Control-Request-Method": "GET",
            ])
            #expect(foreign.headers["access-control-allow-origin"] == nil)
            let plain = try await HTTPExchange.send(url + "?after=0", method: "GET", headers: ["Origin": "http://evil.example"], stream: true)
            #expect(plain.headers["access-control-allow-origin"] == nil)
            #expect(try await ingress.terminate() == 0)
        }
    }
}
