import EventBus
import EventBusTesting
import Foundation
import Testing

/// The real `eventbus-http` against a real `eventbus up` (broker and default pipeline).
@Suite(.serialized) struct IngressEndToEndTests {
    /// Runs `body` with a bus on `backend`, a client of it, and the ingress in front of it.
    static func withIngress(on backend: Backend = .broker, _ body: (UpProcess, BusClient, IngressProcess) async throws -> Void) async throws {
        try await backend.with { arguments in try await withIngress(arguments: arguments, body) }
    }

    private static func withIngress(arguments: [String], _ body: (UpProcess, BusClient, IngressProcess) async throws -> Void) async throws {
        let up = try UpProcess(arguments: arguments)
        try await up.start(within: .seconds(60))
        try await up.terminateAfter {
            let client = try BusClient(options: .init(endpoint: up.commandEndpoint, name: "http-test"))
            defer { client.close() }
            let ingress = try IngressProcess(command: up.commandEndpoint)
            try await ingress.start()
            try await body(up, client, ingress)
            #expect(try await ingress.terminate() == 0, "eventbus-http stops cleanly on SIGTERM: \(ingress.log)")
        }
    }

    static func seqs(_ exchange: HTTPExchange) throws -> [UInt64] {
        guard case .array(let values) = try exchange.json()["seqs"] else { throw ProcessError("no seqs in \(exchange.text)") }
        return values.compactMap { $0.int64Value.map(UInt64.init) }
    }

    /// The `id` of each event of stage `in`, by SEQ, read back from the log.
    static func logged(_ client: BusClient, count: Int) async throws -> [UInt64: String] {
        let consumer = try await client.consume(name: "http-test.check", start: .earliest, prefixes: ["in/"])
        var found: [UInt64: String] = [:]
        for try await delivery in consumer {
            found[delivery.seq] = try JSONParser.parse(delivery.event)["id"]?.stringValue
            consumer.ack(delivery.seq)
            if found.count == count { break }
        }
        try await consumer.cancel()
        return found
    }

    @Test(arguments: Backend.allCases)
    func theThreeModesPublishInOrderAndARetryGetsTheSameSeqs(on backend: Backend) async throws {
        try await Self.withIngress(on: backend) { _, client, ingress in
            let url = ingress.baseURL + "/v1/events"
            let batch = [Events.channel("messaging:general", ["ann", "bob"]), Events.message("m1", from: "ann"),
                         Events.message("m2", from: "ann"), Events.message("m0", from: "bob")]
            let first = try await HTTPExchange.send(url, headers: Events.batched, body: Events.batch(batch))
            #expect(first.status == 200, "\(first.text)")
            #expect(first.headers["content-type"] == "application/json")
            let seqs = try Self.seqs(first)
            #expect(seqs.count == 4)
            #expect(seqs == seqs.sorted() && Set(seqs).count == 4, "one batch, consecutive SEQs in the order given: \(seqs)")

            // The same ids again: the broker's dedup answers with the original SEQs.
            let retry = try await HTTPExchange.send(url, headers: Events.batched, body: Events.batch(batch))
            #expect(try Self.seqs(retry) == seqs)

            let structured = try await HTTPExchange.send(url, headers: Events.structured, body: Array(Events.read("bob", "m1").utf8))
            #expect(structured.status == 200, "\(structured.text)")
            let readSeq = try #require(try Self.seqs(structured).first)

            let binaryHeaders = [
                "ce-specversion": "1.0", "ce-id": "read-bob-m2", "ce-source": "/http-test", "ce-type": "message.read",
                "ce-subject": "messaging:general", "ce-time": "2026-11-22T03:11:00.000Z", "Content-Type": "application/json",
            ]
            let binary = try await HTTPExchange.send(url, headers: binaryHeaders, body: Array(Events.readData("bob", "m2").utf8))
            #expect(binary.status == 200, "\(binary.text)")
            let binarySeq = try #require(try Self.seqs(binary).first)
            // The same event in structured mode is a repeat of the binary one: same identity, same SEQ.
            let again = try await HTTPExchange.send(url, headers: Events.structured, body: Array(Events.read("bob", "m2").utf8))
            #expect(try Self.seqs(again) == [binarySeq])

            // The log holds each event once, at the SEQ the HTTP answer gave.
            let logged = try await Self.logged(client, count: 6)
            #expect(logged == Dictionary(uniqueKeysWithValues: zip(seqs + [readSeq, binarySeq],
                ["create-messaging:general", "new-m1", "new-m2", "new-m0", "read-bob-m1", "read-bob-m2"])))
            let stats = try JSONParser.parse(try await client.stats())
            #expect(stats["stages"]?["in"]?.int64Value == 6, "\(stats)")
        }
    }

    @Test(arguments: Backend.allCases)
    func refusalsCarryTheBusCodeTheFieldAndTheStatus(on backend: Backend) async throws {
        try await Self.withIngress(on: backend) { _, _, ingress in
            let url = ingress.baseURL + "/v1/events"
            let badUser = Events.event("x1", "message.read", subject: "messaging:general", data: Events.readData("@bob", "m1"))
            let bad = try await HTTPExchange.send(url, headers: Events.batched,
                                                  body: Events.batch([Events.channel("messaging:general", ["bob"]), badUser]))
            #expect(bad.status == 400)
            #expect(bad.headers["content-type"] == "application/problem+json")
            let problem = try bad.json()
            #expect(problem["code"]?.stringValue == "bad_event")
            #expect(problem["field"]?.stringValue == "data.user_id")
            #expect(problem["event"]?.int64Value == 1)
            #expect(problem["status"]?.int64Value == 400)
            #expect(problem["type"]?.stringValue == "urn:eventbus:problem:bad_event")
            #expect(problem["title"]?.stringValue?.isEmpty == false)
            #expect(problem["detail"]?.stringValue?.contains("must not start with @") == true)

            let unknownType = try await HTTPExchange.send(url, headers: Events.structured, body: Array(
                Events.event("x2", "message.liked", subject: "messaging:general", data: "{}").utf8))
            #expect(unknownType.status == 400)
            #expect(unknownType.code == "unknown_type")

            let malformed = try await HTTPExchange.send(url, headers: Events.structured, body: Array(#"{"specversion":"1.0","#.utf8))
            #expect(malformed.status == 400)
            #expect(malformed.code == "bad_json")

            let wrongType = try await HTTPExchange.send(url, headers: ["Content-Type": "text/plain"], body: Array("hello".utf8))
            #expect(wrongType.status == 415)
            #expect(wrongType.code == "unsupported_media_type")

            // Over max_event_bytes (65,536): the broker's too_large.
            let padding = String(repeating: "p", count: 70_000)
            let big = Events.event("x3", "message.read", subject: "messaging:general",
                                   data: #"{"cid":"messaging:general","user_id":"bob","message_id":"m1","pad":"\#(padding)"}"#)
            let tooBig = try await HTTPExchange.send(url, headers: Events.structured, body: Array(big.utf8))
            #expect(tooBig.status == 413)
            #expect(tooBig.code == "too_large")
            #expect(try tooBig.json()["event"]?.int64Value == 0)
            // Over 4 MiB of body: refused before it is read whole.
            let huge = try await HTTPExchange.send(url, headers: Events.batched, body: Array(repeating: UInt8(ascii: " "), count: 4_300_000))
            #expect(huge.status == 413)
            #expect(huge.code == "too_large")

            let missing = try await HTTPExchange.send(url, headers: ["ce-specversion": "1.0", "ce-id": "x4", "Content-Type": "application/json"],
                                                      body: Array("{}".utf8))
            #expect(missing.status == 400)
            #expect(try missing.json()["field"]?.stringValue == "ce-source")
        }
    }

    @Test(arguments: Backend.allCases)
    func queriesAnswerAsTheBusDoes(on backend: Backend) async throws {
        try await Self.withIngress(on: backend) { _, client, ingress in
            let events = [Events.channel("messaging:general", ["ann", "bob"]), Events.message("m1", from: "ann"), Events.read("bob", "m1")]
            let published = try await HTTPExchange.send(ingress.baseURL + "/v1/events", headers: Events.batched, body: Events.batch(events))
            #expect(published.status == 200)
            let params = #"{"cid":"messaging:general","message_id":"m1","viewer":"ann"}"#
            // The reducer answers once it has the events: ask the bus itself until it reads bob's receipt.
            var direct = try JSONParser.parse(try await client.request(service: "receipts", method: "message_receipts", params: params))
            var patience = Patience(.seconds(20))
            while direct.description.contains("\"bob\"") == false, patience.allowsAnotherLook() {
                try await Task.sleep(for: .milliseconds(50))  // a poll interval
                direct = try JSONParser.parse(try await client.request(service: "receipts", method: "message_receipts", params: params))
            }
            let overHTTP = try await HTTPExchange.send(ingress.baseURL + "/v1/query/message_receipts", headers: ["Content-Type": "application/json"],
                                                       body: Array(params.utf8))
            #expect(overHTTP.status == 200, "\(overHTTP.text)")
            #expect(overHTTP.headers["content-type"] == "application/json")
            #expect(try overHTTP.json() == direct)

            let unread = try await HTTPExchange.send(ingress.baseURL + "/v1/query/unread_counts", body: Array(#"{"user_id":"ann"}"#.utf8))
            #expect(unread.status == 200)
            #expect(try unread.json()["total_unread_count"] != nil)

            let notFound = try await HTTPExchange.send(ingress.baseURL + "/v1/query/channel_state", body: Array(#"{"cid":"messaging:nope","viewer":"bob"}"#.utf8))
            #expect(notFound.status == 404)
            #expect(notFound.code == "not_found")
            let unknown = try await HTTPExchange.send(ingress.baseURL + "/v1/query/weather", body: Array("{}".utf8))
            #expect(unknown.status == 400)
            #expect(unknown.code == "bad_request")
            let notAnObject = try await HTTPExchange.send(ingress.baseURL + "/v1/query/unread_counts", body: Array("[1]".utf8))
            #expect(notAnObject.status == 400)
            #expect(notAnObject.code == "bad_json")
        }
    }
}
