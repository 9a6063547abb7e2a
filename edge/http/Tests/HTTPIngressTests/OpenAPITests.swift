import EventBus
import EventBusTesting
import Foundation
import Testing
import Yams
import ZeroMQ

/// The real server against docs/openapi.yaml: each request below gets the status it is
/// meant to provoke, that status is documented for its path and method with the media
/// type the server sends, and every documented status is provoked (those that need a
/// broken bus are named below, with where they are tested).
@Suite(.serialized) struct OpenAPITests {
    /// A documented response no request here provokes, and why.
    static let notProvokedHere: [String: String] = [
        "POST /v1/events 503": "busy needs a broker whose disk is full: IngressBusyTests checks it against this file",
        "POST /v1/events 504": "timeout needs a broker that does not answer within 10 s; HTTPProblemTests maps it",
        "POST /v1/query/{method} 503": "unknown_service needs a pipeline that passes a query on unanswered; HTTPProblemTests maps it",
        "GET /v1/stream 403": "forbidden needs an ingress whose own CURVE key may not CONSUME in/ or STATS (not admin); HTTPProblemTests maps it",
        "GET /v1/stream 504": "timeout needs a broker that does not answer CONSUME or STATS within 10 s; HTTPProblemTests maps it",
    ]

    /// The documented operations: "METHOD PATH" to their responses, by status.
    static func specification() throws -> (operations: [String: [String: [String: Any]]], components: [String: Any]) {
        let text = try String(contentsOf: BuildFolder.root.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        let root = try #require(try Yams.load(yaml: text) as? [String: Any])
        let paths = try #require(root["paths"] as? [String: [String: Any]])
        let components = try #require(root["components"] as? [String: Any])
        var operations: [String: [String: [String: Any]]] = [:]
        for (path, methods) in paths {
            for (method, operation) in methods {
                let responses = try #require((operation as? [String: Any])?["responses"] as? [String: Any])
                operations["\(method.uppercased()) \(path)"] = try responses.mapValues { response in
                    var response = try #require(response as? [String: Any])
                    if let reference = response["$ref"] as? String {
                        let name = try #require(reference.split(separator: "/").last)
                        response = try #require((components["responses"] as? [String: Any])?[String(name)] as? [String: Any])
                    }
                    return response
                }
            }
        }
        return (operations, components)
    }

    struct Call {
        let template: String
        let path: String
        var method = "POST"
        var headers: [String: String] = [:]
        var body = ""
        var secured = false
        let expected: Int
        /// An answer that stays open (text/event-stream), read for a moment.
        var stream = false
    }

    static let backend = ["Authorization": "Bearer c2VjcmV0LWJhY2tlbmQtdG9rZW4tMDAx"]
    static let subscriber = ["Authorization": "Bearer c2VjcmV0LWRhc2hib2FyZC10b2tlbi0wMDI"]

    static var calls: [Call] {
        let events = "/v1/events", query = "/v1/query/{method}", stream = "/v1/stream", stats = "/v1/stream/stats"
        let channel = Events.channel("messaging:general", ["ann", "bob"])
        let padding = String(repeating: "p", count: 70_000)
        return [
            Call(template: "/health", path: "/health", method: "GET", expected: 200),
            Call(template: events, path: events, headers: Events.structured, body: channel, expected: 200),
            Call(template: events, path: events, headers: Events.structured, body: "{", expected: 400),
            Call(template: events, path: events, headers: ["Content-Type": "text/plain"], body: "hi", expected: 415),
            Call(template: events, path: events, headers: Events.structured, body: Events.event(
                "big", "message.read", subject: "messaging:general", data: #"{"cid":"messaging:general","user_id":"bob","message_id":"m","pad":"\#(padding)"}"#),
                 expected: 413),
            Call(template: events, path: events, headers: Events.structured, body: channel, secured: true, expected: 401),
            Call(template: events, path: events, headers: Events.structured.merging(subscriber) { $1 }, body: channel, secured: true, expected: 403),
            Call(template: events, path: events, headers: Events.structured.merging(backend) { $1 }, body: channel, secured: true, expected: 200),
            Call(template: query, path: "/v1/query/unread_counts", body: #"{"user_id":"bob"}"#, expected: 200),
            Call(template: query, path: "/v1/query/unread_counts", body: "[]", expected: 400),
            Call(template: query, path: "/v1/query/channel_state", body: #"{"cid":"messaging:nope","viewer":"bob"}"#, expected: 404),
            Call(template: query, path: "/v1/query/unread_counts", body: "{}", secured: true, expected: 401),
            Call(template: query, path: "/v1/query/unread_counts", headers: subscriber, body: "{}", secured: true, expected: 403),
            Call(template: stream, path: "/v1/stream?after=0", method: "GET", expected: 200, stream: true),
            Call(template: stream, path: stream, method: "GET", headers: subscriber, secured: true, expected: 200, stream: true),
            Call(template: stream, path: "/v1/stream?after=x", method: "GET", expected: 400),
            Call(template: stream, path: "/v1/stream?prefix=in/", method: "GET", expected: 400),
            Call(template: stream, path: stream, method: "GET", secured: true, expected: 401),
            Call(template: stats, path: stats, method: "GET", expected: 200),
            Call(template: stats, path: stats, method: "GET", secured: true, expected: 401),
            Call(template: stats, path: stats, method: "GET", headers: subscriber, secured: true, expected: 403),
        ]
    }

    /// Checks one answer against the documented responses of its operation.
    static func check(_ exchange: HTTPExchange, _ operation: String, _ responses: [String: [String: Any]]) {
        guard let response = responses[String(exchange.status)] else {
            Issue.record("\(operation) answered \(exchange.status), which docs/openapi.yaml does not list (\(exchange.text))")
            return
        }
        let mediaTypes = Set((response["content"] as? [String: Any])?.keys.map { $0 } ?? [])
        let sent = exchange.headers["content-type"].map { String($0.split(separator: ";")[0]) } ?? ""
        #expect(mediaTypes.contains(sent), "\(operation) \(exchange.status): sent \(sent), documented \(mediaTypes)")
        for header in ((response["headers"] as? [String: Any]) ?? [:]).keys {
            #expect(exchange.headers[header.lowercased()] != nil, "\(operation) \(exchange.status): no \(header) header")
        }
    }

    @Test func theServerAnswersAsDocumented() async throws {
        let (operations, _) = try Self.specification()
        var provoked: Set<String> = []
        try await DocumentedServers.run { servers in
            for call in Self.calls {
                let port = call.secured ? servers.secured.port : servers.openPort
                let exchange = try await HTTPExchange.send("http://127.0.0.1:\(port)\(call.path)", method: call.method, headers: call.headers,
                                                           body: Array(call.body.utf8), stream: call.stream)
                let operation = "\(call.method) \(call.template)"
                #expect(exchange.status == call.expected, "\(operation) \(call.path): \(exchange.text)")
                let responses = try #require(operations[operation], "\(operation) is not in docs/openapi.yaml")
                Self.check(exchange, operation, responses)
                provoked.insert("\(operation) \(exchange.status)")
            }
            // The broker alone: its pipeline's stages have no plugin, so a query is not answered
            // within the broker's request timeout: 504 timeout.
            let broker = try BrokerProcess(arguments: ["--request-timeout-ms", "300"])
            try await broker.start(context: try Context())
            try await broker.terminateAfter {
                let ingress = try IngressProcess(command: broker.commandEndpoint)
                try await ingress.start()
                let exchange = try await HTTPExchange.send(ingress.baseURL + "/v1/query/unread_counts", body: Array("{}".utf8))
                #expect(exchange.status == 504 && exchange.code == "timeout", "\(exchange.text)")
                #expect(exchange.headers["retry-after"] == "1")
                let operation = "POST /v1/query/{method}"
                Self.check(exchange, operation, operations[operation] ?? [:])
                provoked.insert("\(operation) \(exchange.status)")
                try await ingress.terminate()
            }
        }
        for (operation, responses) in operations {
            for status in responses.keys {
                let key = "\(operation) \(status)"
                #expect(provoked.contains(key) || Self.notProvokedHere[key] != nil, "\(key) is documented but never provoked")
            }
        }
        for key in Self.notProvokedHere.keys {
            #expect(!provoked.contains(key), "\(key) is provoked now: drop it from notProvokedHere")
        }
    }
}
