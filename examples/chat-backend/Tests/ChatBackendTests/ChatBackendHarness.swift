import ChatBackend
import EventBus
import EventBusTesting
import Foundation
import FoundationNetworking
import Hummingbird
import Logging
import Testing

/// The example chat backend served in this process on an ephemeral port, and an HTTP client for it.
final class ChatBackendHarness: Sendable {
    let bus: BusClient
    let base: URL
    private let server: Task<Void, any Error>

    /// Starts the backend against the broker at `endpoint`; bus calls fail after `busTimeout`.
    init(endpoint: String, busTimeout: Duration = .seconds(5)) async throws {
        bus = try BusClient(options: .init(endpoint: endpoint, name: "chat-backend-test", requestTimeout: busTimeout, resendAfter: .milliseconds(500)))
        var logger = Logger(label: "chat-backend-test")
        logger.logLevel = .critical  // stopping the server by cancellation logs an error
        let backend = ChatBackend(bus: bus, logger: logger)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = backend.application(host: "127.0.0.1", port: 0) { port in continuation.yield(port) }
        server = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw ProcessError("the backend did not start") }
        base = URL(string: "http://127.0.0.1:\(port)")!  // a well-formed URL
    }

    func stop() {
        server.cancel()
        bus.close()
    }

    struct Reply: @unchecked Sendable {
        let status: Int
        let json: JSONValue?
        let headers: [AnyHashable: Any]

        var seq: UInt64? { json?["seq"]?.int64Value.map(UInt64.init) }
        var errorField: String? { json?["error"]?["field"]?.stringValue }

        func header(_ name: String) -> String? {
            headers.first { ($0.key as? String)?.lowercased() == name.lowercased() }?.value as? String
        }
    }

    /// One HTTP call; `body` is sent as JSON text.
    func call(_ method: String, _ path: String, _ body: String? = nil, headers: [String: String] = [:]) async throws -> Reply {
        var request = URLRequest(url: URL(string: base.absoluteString + path)!)  // paths in the tests are well-formed
        request.httpMethod = method
        request.timeoutInterval = 30
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw ProcessError("not an HTTP response") }
        return Reply(status: http.statusCode, json: data.isEmpty ? nil : try? JSONParser.parse(Array(data)), headers: http.allHeaderFields)
    }

    /// The events on stage `in` from the start, read by a fresh durable consumer, until
    /// `count` arrived (or `within` passed: ask for one more than expected to check that no more come).
    static func ingress(_ bus: BusClient, prefixes: [String], count: Int, within: Duration = .seconds(10)) async throws -> [[String: Any]] {
        let consumer = try await bus.consume(name: "check-\(UUID().uuidString.prefix(8).lowercased())", start: .earliest, prefixes: prefixes)
        let collector = Task {
            var events: [[UInt8]] = []
            for try await delivery in consumer {
                events.append(delivery.event)
                consumer.ack(delivery.seq)
                if events.count >= count { break }
            }
            return events
        }
        let timeout = Task {
            try await Task.sleep(for: within)  // a deadline timer
            try? await consumer.cancel()
        }
        defer { timeout.cancel() }
        let events = try await collector.value
        try? await consumer.cancel()
        return try events.map { try #require(try JSONSerialization.jsonObject(with: Data($0)) as? [String: Any]) }
    }

    /// Whether `value` (from JSONSerialization) is the JSON `text`, members in any order.
    static func same(_ value: Any?, _ text: String) -> Bool {
        guard let value, let expected = try? JSONSerialization.jsonObject(with: Data(text.utf8)) else { return false }
        return NSArray(array: [value]).isEqual(to: [expected])
    }
}

extension JSONValue {
    /// `self` parsed from JSON text (for expected values in tests).
    static func of(_ text: String) -> JSONValue {
        (try? JSONParser.parse(Array(text.utf8))) ?? .null
    }
}
