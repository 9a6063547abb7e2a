import EventBus
import EventBusBroker
import Foundation
import Logging
import Testing

/// The client library against the real broker: publish, consume, request, stats, live stream, reconnect.
@Suite struct ClientIntegrationTests {
    static func quiet() -> Logger {
        var logger = Logger(label: "test.client")
        logger.logLevel = .critical
        return logger
    }

    static func client(_ bus: TestBroker, timeout: Duration = .seconds(10)) throws -> BusClient {
        try BusClient(options: BusClientOptions(endpoint: bus.broker.commandEndpoint, name: "test", requestTimeout: timeout,
                                                resendAfter: .milliseconds(300)), logger: quiet())
    }

    @Test func publishReturnsSeqsAndRefusalsBecomeTypedErrors() async throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let client = try Self.client(bus); defer { client.close() }
        #expect(try await client.publish([Events.read(message: "m1"), Events.read(message: "m2")]) == [1, 2])
        let bad = Events.make(type: "message.read", subject: "messaging:general", data: #"{"cid":"messaging:general"}"#)
        await #expect(throws: BusError.self) { _ = try await client.publish(bad) }
        do {
            _ = try await client.publish(bad)
        } catch {
            #expect(error.code == .badEvent)
            #expect(error.message.contains("user_id"))
        }
        let all = (0..<1_250).map { Events.read(message: "n\($0)") }
        let seqs = try await client.publishAll(all, batchSize: 100, window: 4)
        #expect(seqs == Array(3...1_252))
    }

    /// Issue 14: batches sent from concurrent tasks overtook one another, so the log's order
    /// was not the input's. Many small batches, a window of many, many rounds: every SEQ must
    /// follow the one before it in the input's order.
    @Test func publishAllLogsEventsInTheOrderGiven() async throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let client = try Self.client(bus); defer { client.close() }
        var next: UInt64 = 1
        for round in 0..<20 {
            let events = (0..<2_000).map { Events.read(message: "r\(round)-\($0)") }
            let seqs = try await client.publishAll(events, batchSize: 1 + round % 7, window: 16)
            let outOfOrder = seqs.indices.first { seqs[$0] != next + UInt64($0) }
            #expect(seqs.count == 2_000 && outOfOrder == nil,
                    "round \(round): the log's order is not the input's from event \(outOfOrder ?? -1)")
            next += 2_000
        }
        // The log holds them in that order: read back the ids of the last round.
        let consumer = try await client.consume(name: "order", start: .seq(next - 2_000), credit: 2_000, prefixes: ["in/"])
        var index = 0
        for try await delivery in consumer {
            let id = try JSONParser.parse(delivery.event)["data"]?["message_id"]?.stringValue
            #expect(id == "r19-\(index)")
            index += 1
            if index == 2_000 { break }
        }
        try await consumer.cancel()
    }

    /// A batch refused in the middle: the events before it are logged in order, no batch is
    /// sent after it, and the error names where to publish again from.
    @Test func publishAllStopsAtAFailedBatchAndSaysWhereToResume() async throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let client = try Self.client(bus); defer { client.close() }
        var events = (0..<1_000).map { Events.read(message: "e\($0)") }
        events[437] = Events.make(type: "message.read", subject: "messaging:general", data: #"{"cid":"messaging:general"}"#)
        do {
            _ = try await client.publishAll(events, batchSize: 10, window: 1)
            Issue.record("a bad event was published")
        } catch {
            #expect(error.code == .badEvent)
            #expect(BusClient.failedEventRange(of: error) == 430...439, "\(error.message)")
            #expect(!error.message.contains("in flight"), "window 1 sends nothing after the failed batch")
        }
        // Exactly the prefix 0..<430 is in the log.
        let stats = try JSONParser.parse(try await client.stats())
        #expect(stats["head_seq"]?.doubleValue == 430)
        // Publishing again from the named event, fixed, continues the order.
        events[437] = Events.read(message: "e437")
        let rest = try await client.publishAll(Array(events[430...]), batchSize: 10, window: 4)
        #expect(rest.count == 570 && zip(rest, 431...1_000).allSatisfy { $0 == $1 }, "not in order after the resume")
    }

    @Test func durableConsumerYieldsInOrderAndResumesAfterItsAck() async throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let client = try Self.client(bus); defer { client.close() }
        _ = try await client.publish((0..<10).map { Events.read(message: "m\($0)") })
        let consumer = try await client.consume(name: "reader", start: .earliest, credit: 4, prefixes: ["in/"])
        #expect(consumer.firstSeq == 1)
        var seen: [UInt64] = []
        for try await delivery in consumer {
            seen.append(delivery.seq)
            #expect(delivery.topic == "in/messaging:general/message.read")
            if delivery.seq == 6 { consumer.ack(6) ; break }
            consumer.ack(delivery.seq)
        }
        #expect(seen == [1, 2, 3, 4, 5, 6])
        try await consumer.cancel()
        let other = try Self.client(bus); defer { other.close() }
        let resumed = try await other.consume(name: "reader", start: .resume, credit: 10, prefixes: ["in/"])
        #expect(resumed.firstSeq == 7)
    }

    @Test func requestsReachTheirServiceOrFailWithTheirCode() async throws {
        let bus = try TestBroker { $0.requestTimeoutMilliseconds = 200 }; defer { bus.stop() }
        let client = try Self.client(bus); defer { client.close() }
        do {
            _ = try await client.request(service: "weather", method: "today", params: "{}")
            Issue.record("an unknown service answered")
        } catch {
            #expect(error.code == .unknownService)
        }
        do {
            _ = try await client.request(service: "receipts", method: "unread_counts", params: #"{"user_id":"bob"}"#)
            Issue.record("nobody should answer")
        } catch {
            #expect(error.code == .timeout)
        }
        let stats = try JSONParser.parse(try await client.stats())
        #expect(stats["rejected"]?["timeout"]?.int64Value == 1)
    }

    @Test func liveSubscriptionSeesOutEventsWithTheirSeq() async throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let subscription = try Subscription(endpoint: bus.broker.streamEndpoint, prefixes: ["out/"], logger: Self.quiet())
        defer { subscription.cancel() }
        while try bus.streamSubscriptions() < 1 { try await Task.sleep(for: .milliseconds(5)) }  // a poll interval
        let client = try Self.client(bus); defer { client.close() }
        _ = try await client.publish(Events.read(), stage: "in")
        let seq = try await client.publish(Events.read(), stage: "out")
        var iterator = subscription.makeAsyncIterator()
        let delivery = try #require(await iterator.next())
        #expect(delivery.seq == seq)
        #expect(delivery.topic == "out/messaging:general/message.read")
    }

    @Test func clientReconnectsByItselfWhenTheBrokerRestarts() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("client-reconnect-\(UUID().uuidString.prefix(8))").path
        let bus = try TestBroker(directory: directory) { config in
            config.commandEndpoint = "ipc://\(directory).command"
            config.streamEndpoint = "ipc://\(directory).stream"
        }
        defer { bus.stop() }
        let client = try Self.client(bus, timeout: .seconds(20)); defer { client.close() }
        _ = try await client.publish((0..<3).map { Events.read(message: "m\($0)", id: "first-\($0)") })
        let consumer = try await client.consume(name: "survivor", start: .earliest, credit: 100, prefixes: ["in/"])
        var iterator = consumer.makeAsyncIterator()
        for expected in 1...3 {
            let delivery = try #require(try await iterator.next())
            #expect(delivery.seq == UInt64(expected))
            consumer.ack(delivery.seq)
        }
        // The ACK has reached the broker (a clean stop saves the offsets file).
        func acked() async throws -> Int64? {
            guard case .array(let consumers)? = try JSONParser.parse(try await client.stats())["consumers"] else { return nil }
            return consumers.first { $0["name"]?.stringValue == "survivor" }?["acked"]?.int64Value
        }
        while try await acked() != 3 { try await Task.sleep(for: .milliseconds(5)) }  // a poll interval
        try bus.restart()
        // The same client publishes again after the restart, and its consumer carries on.
        let seqs = try await client.publish((0..<2).map { Events.read(message: "n\($0)", id: "second-\($0)") })
        #expect(seqs == [4, 5])
        let next = try #require(try await iterator.next())
        #expect(next.seq == 4)
    }

    @Test func withNoBrokerACallFailsWithTimeoutNamingTheEndpoint() async throws {
        let endpoint = "ipc://\(FileManager.default.temporaryDirectory.path)/nobody-\(UUID().uuidString.prefix(8))"
        let client = try BusClient(options: .init(endpoint: endpoint, requestTimeout: .milliseconds(300)), logger: Self.quiet())
        defer { client.close() }
        // It fails (rather than waiting for ever) with a timeout that names the endpoint.
        let error = await #expect(throws: BusError.self) { try await client.ping() }
        #expect(error?.code == .timeout)
        #expect(error?.message.contains(endpoint) == true)
    }
}
