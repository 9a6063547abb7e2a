import EventBus
import EventBusJetStream
import EventBusTesting
import Foundation
import Testing

/// REQ through the JetStream gateway: the query stored at `in`, the answer taken from
/// the `reply` a stage writes to `out`, with the broker's errors. A test plays the
/// plugin by hand with the Swift client.
@Suite(.serialized) struct GatewayRequestTests {
    static func reply(to query: JSONValue, data: String) throws -> [UInt8] {
        guard case .string(let token)? = query["replyto"] else { throw TestFailure("the query has no replyto: \(query)") }
        return Array(#"{"specversion":"1.0","id":"reply:\#(token)","source":"/test-plugin","type":"reply","subject":"receipts","replyto":"\#(token)","data":\#(data)}"#.utf8)
    }

    /// The bus error `task` ended with (recording an issue if it ended otherwise).
    static func failure(of task: Task<[UInt8], any Error>, sourceLocation: SourceLocation = #_sourceLocation) async -> BusError? {
        switch await task.result {
        case .success(let value):
            Issue.record("answered OK: \(String(decoding: value, as: UTF8.self))", sourceLocation: sourceLocation)
            return nil
        case .failure(let error as BusError):
            return error
        case .failure(let error):
            Issue.record("failed with \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// The next `query` at `in`, read by the consumer `plugin`.
    static func nextQuery(_ consumer: DurableConsumer) async throws -> (seq: UInt64, event: JSONValue, bytes: [UInt8]) {
        for try await delivery in consumer {
            consumer.ack(delivery.seq)
            let event = try JSONParser.parse(delivery.event)
            if event["type"]?.stringValue == "query" { return (delivery.seq, event, delivery.event) }
        }
        throw TestFailure("the consumer ended before a query came")
    }

    @Test func aReplyAtOutAnswersTheReqAndAnUnansweredQueryIsUnknownService() async throws {
        try await withDeadline(.seconds(600)) {
            let fixture = try GatewayFixture { $0.requestTimeout = .seconds(20) }
            defer { fixture.stop() }
            let plugin = fixture.client
            let backend = try BusClient(options: BusClientOptions(endpoint: fixture.endpoint, requestTimeout: .seconds(30)))
            defer { backend.close() }
            let queries = try await plugin.consume(name: "plugin", start: .earliest, credit: 10, prefixes: ["in/"])

            // Answered: the stage writes a reply with a result.
            let answered = Task { try await backend.request(service: "receipts", method: "unread_counts", params: #"{"user_id":"bob"}"#) }
            let first = try await Self.nextQuery(queries)
            #expect(first.event["data"]?["method"]?.stringValue == "unread_counts")
            #expect(first.event["data"]?["params"]?["user_id"]?.stringValue == "bob")
            #expect(first.event["source"]?.stringValue == "/eventbus/gateway")
            _ = try await plugin.publish(try Self.reply(to: first.event, data: #"{"result":{"total_unread_count":3}}"#), stage: "out")
            #expect(try JSONParser.parse(try await answered.value) == JSONParser.parse(Array(#"{"total_unread_count":3}"#.utf8)))

            // Refused by the service: its code and message.
            let refused = Task { try await backend.request(service: "receipts", method: "channel_state", params: #"{"cid":"messaging:nope"}"#) }
            let second = try await Self.nextQuery(queries)
            _ = try await plugin.publish(try Self.reply(to: second.event, data: #"{"error":{"code":"not_found","message":"no channel messaging:nope"}}"#),
                                         stage: "out")
            let error = await Self.failure(of: refused)
            #expect(error?.code == .notFound)
            #expect(error?.message == "no channel messaging:nope")

            // No stage answered: the query itself reached `out`.
            let unserved = Task { try await backend.request(service: "receipts", method: "unread_counts", params: "{}") }
            let third = try await Self.nextQuery(queries)
            _ = try await plugin.publish(third.bytes, stage: "out")
            let missing = await Self.failure(of: unserved)
            #expect(missing?.code == .unknownService)
        }
    }

    @Test func anUnknownServiceOrABadRequestIsRefusedAtOnceAndNoAnswerIsATimeout() async throws {
        let fixture = try GatewayFixture { $0.requestTimeout = .milliseconds(500) }
        defer { fixture.stop() }
        let (running, client) = (fixture.running, fixture.client)
        let unknown = await #expect(throws: BusError.self) {
            _ = try await client.request(service: "nosuch", method: "x", params: "{}")
        }
        #expect(unknown?.code == .unknownService)
        let bad = await #expect(throws: BusError.self) {
            _ = try await client.request(service: "receipts", method: "", params: "{}")
        }
        #expect(bad?.code == .badRequest)
        #expect(bad?.message.contains("method") == true)
        // Known, but no stage consumes `in`: nothing answers within the request timeout.
        let silent = await #expect(throws: BusError.self) {
            _ = try await client.request(service: "receipts", method: "unread_counts", params: "{}")
        }
        #expect(silent?.code == .timeout)
        // A service a plugin declares in HELLO becomes known.
        let declaring = try BusClient(options: BusClientOptions(endpoint: running.gateway.commandEndpoint, requestTimeout: .seconds(30)))
        defer { declaring.close() }
        _ = try await declaring.hello(role: "plugin", version: "1", services: ["search"])
        let declared = await #expect(throws: BusError.self) {
            _ = try await client.request(service: "search", method: "find", params: "{}")
        }
        #expect(declared?.code == .timeout, "a declared service is known: no unknown_service")
    }
}
