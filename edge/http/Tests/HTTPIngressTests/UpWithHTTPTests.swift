import EventBus
import EventBusTesting
import Foundation
import Testing

/// `eventbus up --http ADDR`: the ingress supervised beside the plugins, with and without keys.
@Suite(.serialized) struct UpWithHTTPTests {
    static let backendToken = "backend-token-for-the-http-test-0001"
    static let subscriberToken = "subscriber-token-for-the-http-test-01"

    /// Polls `GET /health` until the ingress answers.
    static func waitForHealth(_ base: String, _ up: UpProcess) async throws {
        var patience = Patience(.seconds(30))
        repeat {
            if let health = try? await HTTPExchange.send(base + "/health", method: "GET"), health.status == 200 { return }
            try await Task.sleep(for: .milliseconds(100))  // a poll interval
        } while patience.allowsAnotherLook()
        throw ProcessError("eventbus-http of eventbus up --http did not answer: \(up.log)")
    }

    @Test func upRunsTheIngressAgainstItsBroker() async throws {
        let port = try EphemeralEndpoint.freePort()
        let up = try UpProcess(arguments: ["--http", "127.0.0.1:\(port)"], environment: ["EVENTBUS_HTTP": BuildFolder.http])
        try await up.start()
        try await up.terminateAfter {
            let base = "http://127.0.0.1:\(port)"
            try await Self.waitForHealth(base, up)
            let reply = try await HTTPExchange.send(base + "/v1/events", headers: Events.structured,
                                                    body: Array(Events.channel("messaging:general", ["ann"]).utf8))
            #expect(reply.status == 200, "\(reply.text)")
            let client = try BusClient(options: .init(endpoint: up.commandEndpoint, name: "http-test"))
            defer { client.close() }
            let stats = try JSONParser.parse(try await client.stats())
            #expect(stats["stages"]?["in"]?.int64Value == 1)
        }
        // Stopped with eventbus up: nothing listens any more.
        let after = try await RunningProcess.run("/usr/bin/curl", ["-s", "--max-time", "5", "http://127.0.0.1:\(port)/health"])
        #expect(after.status != 0)
    }

    @Test func withKeysTheIngressGetsAKeyAndChecksTokens() async throws {
        let directory = try TemporaryDirectory.create("eventbus-http-keys")
        defer { try? FileManager.default.removeItem(at: directory) }
        let security = try await SecurityFile.write(in: directory, tokens: [Self.backendToken: "backend", Self.subscriberToken: "subscriber"])
        let port = try EphemeralEndpoint.freePort()
        let up = try UpProcess(arguments: ["--http", "127.0.0.1:\(port)", "--security", security.path],
                               environment: ["EVENTBUS_HTTP": BuildFolder.http])
        try await up.start()
        try await up.terminateAfter {
            let base = "http://127.0.0.1:\(port)"
            try await Self.waitForHealth(base, up)
            let event = Array(Events.channel("messaging:general", ["ann"]).utf8)
            let none = try await HTTPExchange.send(base + "/v1/events", headers: Events.structured, body: event)
            #expect(none.status == 401)
            #expect(none.code == "unauthorized")
            #expect(none.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            let wrong = try await HTTPExchange.send(base + "/v1/events", headers: Events.structured.merging(
                ["Authorization": "Bearer \(Self.backendToken)x"]) { $1 }, body: event)
            #expect(wrong.status == 401)
            let subscriber = try await HTTPExchange.send(base + "/v1/events", headers: Events.structured.merging(
                ["Authorization": "Bearer \(Self.subscriberToken)"]) { $1 }, body: event)
            #expect(subscriber.status == 403)
            #expect(subscriber.code == "forbidden")
            let query = try await HTTPExchange.send(base + "/v1/query/unread_counts", headers: ["Authorization": "Bearer \(Self.subscriberToken)"],
                                                    body: Array(#"{"user_id":"ann"}"#.utf8))
            #expect(query.status == 403)
            // The backend token publishes: the ingress's own CURVE key (role backend) reaches the broker.
            let backend = try await HTTPExchange.send(base + "/v1/events", headers: Events.structured.merging(
                ["Authorization": "Bearer \(Self.backendToken)"]) { $1 }, body: event)
            #expect(backend.status == 200, "\(backend.text) \(up.log)")
            let seqs = try backend.json()["seqs"]
            #expect(seqs == .array([.number("1")]))
        }
    }

    @Test func anAbsentExecutableIsAClearError() async throws {
        let up = try UpProcess(arguments: ["--http", "127.0.0.1:0"], environment: ["EVENTBUS_HTTP": "/nonexistent/eventbus-http"])
        await #expect(throws: ProcessError.self) { try await up.start(within: .seconds(20)) }
        #expect(up.log.contains("--http needs the eventbus-http executable, and there is none at /nonexistent/eventbus-http"), "\(up.log)")
    }

    @Test func noTokensNoListeningBeyondLoopback() async throws {
        let ingress = try IngressProcess(command: "ipc:///nonexistent/command.sock")
        await #expect(throws: ProcessError.self) { try await ingress.start(listen: "0.0.0.0:0") }
        #expect(ingress.log.contains("refusing to listen on 0.0.0.0:0 without bearer tokens"), "\(ingress.log)")
        #expect(ingress.process?.terminationStatus == 64)
    }
}
