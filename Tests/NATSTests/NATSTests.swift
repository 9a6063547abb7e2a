import Foundation
import EventBusTesting
import NATS
import Synchronization
import Testing

/// The wrapper against a real nats-server 2.15 (see ``NATSServer``): each test starts its own.
@Suite struct ConnectionTests {
    @Test func unreachableAddressFailsNamingIt() throws {
        // Port 1 on loopback: nothing listens there, the connection is refused at once.
        let address = "nats://127.0.0.1:1"
        let error = #expect(throws: NATSError.self) {
            try Connection(ConnectOptions(servers: [address], timeout: .milliseconds(500), allowReconnect: false))
        }
        #expect(error?.isNoServer == true)
        #expect(error?.description.contains(address) == true)
    }

    @Test func coreSubscriberGetsPayloadAndHeaders() throws {
        let server = try NATSServer()
        let connection = try server.connect()
        #expect(connection.connectedURL == server.url)
        let subscription = try connection.subscribe("greet.*")
        try connection.flush()
        try connection.publish("greet.alice", Array("hello".utf8), headers: ["Trace": "t-1"])
        try connection.publish("other", [1])
        let message = try #require(try subscription.next(timeout: .seconds(5)))
        #expect(message.subject == "greet.alice")
        #expect(message.payload == Array("hello".utf8))
        #expect(message.headers["Trace"] == "t-1")
        #expect(try subscription.next(timeout: .milliseconds(100)) == nil)
        connection.close()
        #expect(connection.isClosed)
    }

    /// A request nobody listens to fails at once with "no responders", told apart from a timeout.
    @Test func aRequestNobodyListensToIsNoResponders() throws {
        let server = try NATSServer()
        let connection = try server.connect()
        let error = #expect(throws: NATSError.self) { try connection.request("nobody.home", [1], timeout: .seconds(5)) }
        #expect(error?.isNoResponders == true)
        #expect(error?.isTimeout == false)
        let subscription = try connection.subscribe("somebody.home")
        try connection.flush()
        // Somebody listens but does not answer: a timeout, not "no responders".
        let silent = #expect(throws: NATSError.self) { try connection.request("somebody.home", [1], timeout: .milliseconds(200)) }
        #expect(silent?.isTimeout == true)
        #expect(silent?.isNoResponders == false)
        withExtendedLifetime(subscription) {}
    }
}

@Suite struct JetStreamTests {
    @Test func messageIDPublishedTwiceIsStoredOnce() throws {
        let server = try NATSServer()
        let js = try JetStream(connection: try server.connect())
        try js.addStream(StreamConfig(name: "EVENTS", subjects: ["events.>"], storage: .file, duplicateWindow: .seconds(60)))

        let first = try js.publish("events.in", Array("one".utf8), messageID: "source-1/m-1")
        #expect(first == PubAck(stream: "EVENTS", sequence: 1, duplicate: false))
        let again = try js.publish("events.in", Array("one".utf8), messageID: "source-1/m-1")
        #expect(again == PubAck(stream: "EVENTS", sequence: 1, duplicate: true))
        let other = try js.publish("events.in", Array("two".utf8), messageID: "source-1/m-2")
        #expect(other == PubAck(stream: "EVENTS", sequence: 2, duplicate: false))

        let info = try js.streamInfo("EVENTS")
        #expect(info.messages == 2)
        #expect(info.firstSequence == 1)
        #expect(info.lastSequence == 2)
    }

    @Test func streamIsAddedUpdatedAndDeleted() throws {
        let server = try NATSServer()
        let js = try JetStream(connection: try server.connect())
        let config = StreamConfig(name: "ORDERS", subjects: ["orders.>"], storage: .memory, replicas: 1, duplicateWindow: .seconds(30))
        let added = try js.addStream(config)
        #expect(added.config == config)
        #expect(added.messages == 0)
        #expect(added.consumerCount == 0)

        var wider = config
        wider.subjects = ["orders.>", "refunds.>"]
        wider.duplicateWindow = .seconds(90)
        try js.updateStream(wider)
        try js.publish("refunds.7", [7])
        let info = try js.streamInfo("ORDERS")
        #expect(info.config == wider)
        #expect(info.messages == 1)

        try js.deleteStream("ORDERS")
        let error = #expect(throws: NATSError.self) { try js.streamInfo("ORDERS") }
        #expect(error?.isNotFound == true)
    }

    @Test func publishWithoutAStreamFails() throws {
        let server = try NATSServer()
        let js = try JetStream(connection: try server.connect(), options: JetStreamOptions(requestTimeout: .seconds(2)))
        let error = #expect(throws: NATSError.self) { try js.publish("nowhere", [1]) }
        // What JetStreamAnswer and the cluster warm-up retry on, and FailoverTests' reads.
        #expect(error?.isNoResponders == true)
        #expect(error?.isTimeout == false)
    }

    @Test func asyncPublishFromManyTasksGetsEveryAck() async throws {
        let server = try NATSServer()
        let js = try JetStream(connection: try server.connect())
        try js.addStream(StreamConfig(name: "MANY", subjects: ["many"], storage: .file))
        let count = 300

        let acks = try await withThrowingTaskGroup(of: (Int, PubAck).self) { group in
            for index in 0..<count {
                group.addTask { (index, try await js.publishAsync("many", Array("m-\(index)".utf8), messageID: "m-\(index)")) }
            }
            var acks: [Int: PubAck] = [:]
            for try await (index, ack) in group { acks[index] = ack }
            return acks
        }
        #expect(acks.count == count)
        #expect(acks.values.allSatisfy { $0.stream == "MANY" && !$0.duplicate })
        #expect(Set(acks.values.map(\.sequence)) == Set(1...UInt64(count)))
        #expect(try js.streamInfo("MANY").messages == UInt64(count))

        // The same ids again: every one a duplicate, answered with the first sequence.
        for index in [0, 17, 299] {
            let repeated = try await js.publishAsync("many", [], messageID: "m-\(index)")
            #expect(repeated == PubAck(stream: "MANY", sequence: acks[index]?.sequence ?? 0, duplicate: true))
        }
        #expect(try js.streamInfo("MANY").messages == UInt64(count))
    }

    @Test func asyncPublishOnAClosedConnectionFails() async throws {
        let server = try NATSServer()
        let connection = try server.connect()
        let js = try JetStream(connection: connection)
        try js.addStream(StreamConfig(name: "CLOSED", subjects: ["closed"], storage: .memory))
        #expect(try await js.publishAsync("closed", [1]).sequence == 1)
        connection.close()
        await #expect(throws: NATSError.self) { try await js.publishAsync("closed", [2]) }
    }

    /// The wait ends with the ack timeout's error, not a hang (a deadline guards the hang;
    /// no timing is asserted: a loaded machine stretches every wait).
    @Test
    func asyncPublishToADeadServerFailsWithItsAckTimeout() async throws {
        try await withDeadline(.seconds(600)) {
            let server = try NATSServer()
            // A connection that keeps trying to reconnect: only the ack timeout ends the wait.
            let connection = try Connection(ConnectOptions(servers: [server.url], timeout: .milliseconds(500),
                                                           allowReconnect: true, maxReconnect: -1, reconnectWait: .milliseconds(100)))
            let js = try JetStream(connection: connection, options: JetStreamOptions(asyncAckTimeout: .milliseconds(500)))
            try js.addStream(StreamConfig(name: "DEAD", subjects: ["dead"], storage: .memory))
            #expect(try await js.publishAsync("dead", [1]).sequence == 1)
            server.kill()
            let error = await #expect(throws: NATSError.self) { try await js.publishAsync("dead", [2]) }
            #expect(error?.isTimeout == true)
            connection.close()
        }
    }

    /// A publish libnats refuses (here: past `maxPendingAsync`, after the stall wait) fails
    /// on the caller's thread, and every publish's completion runs exactly once, the one in
    /// flight too (failed when the connection closes).
    @Test
    func aRefusedAsyncPublishCompletesOnceAndLeavesTheOthersAlone() async throws {
        try await withDeadline(.seconds(600)) {
            let server = try NATSServer()
            let connection = try Connection(ConnectOptions(servers: [server.url], timeout: .milliseconds(500),
                                                           allowReconnect: true, maxReconnect: -1, reconnectWait: .milliseconds(100)))
            let js = try JetStream(connection: connection, options: JetStreamOptions(
                asyncAckTimeout: .seconds(600), maxPendingAsync: 1, stallWait: .milliseconds(50)))
            try js.addStream(StreamConfig(name: "STALL", subjects: ["stall"], storage: .memory))
            server.kill()  // no ack comes any more
            let outcomes = Mutex<[Int: [Bool]]>([:])
            for index in 0..<3 {
                js.publishAsync("stall", [UInt8(index)]) { result in
                    outcomes.withLock { $0[index, default: []].append((try? result.get()) != nil) }
                }
            }
            // The first is in flight; the two past the limit failed at once, on this thread.
            #expect(outcomes.withLock { $0 } == [1: [false], 2: [false]])
            connection.close()
            while outcomes.withLock({ $0[0] == nil }) { try await Task.sleep(for: .milliseconds(10)) }  // poll interval
            #expect(outcomes.withLock { $0 } == [0: [false], 1: [false], 2: [false]])
        }
    }

    @Test func headersTravelWithTheMessage() throws {
        let server = try NATSServer()
        let js = try JetStream(connection: try server.connect())
        try js.addStream(StreamConfig(name: "H", subjects: ["h"], storage: .memory))
        try js.publish("h", [1], messageID: "id-1", headers: ["Eb-Stage": "in", "Eb-Source": "gateway-2"])
        let consumer = try js.pullConsumer(PullConsumerConfig(stream: "H", durable: "reader"))
        let message = try #require(try consumer.fetch(batch: 1, timeout: .seconds(5)).first)
        #expect(message.headers["Nats-Msg-Id"] == "id-1")
        #expect(message.headers["Eb-Stage"] == "in")
        #expect(message.headers["Eb-Source"] == "gateway-2")
        #expect(message.payload == [1])
    }
}

@Suite struct PullConsumerTests {
    @Test func fetchAckAndRedeliveryAfterNak() throws {
        let server = try NATSServer()
        let js = try JetStream(connection: try server.connect())
        try js.addStream(StreamConfig(name: "WORK", subjects: ["work.>"], storage: .file))
        for index in 1...3 { try js.publish("work.item", Array("job-\(index)".utf8), messageID: "job-\(index)") }

        let consumer = try js.pullConsumer(PullConsumerConfig(stream: "WORK", durable: "workers", ackWait: .seconds(30)))
        let batch = try consumer.fetch(batch: 10, timeout: .seconds(5))
        #expect(batch.map { String(decoding: $0.payload, as: UTF8.self) } == ["job-1", "job-2", "job-3"])
        #expect(try batch.map { try $0.metadata().deliveries } == [1, 1, 1])
        #expect(try batch.map { try $0.metadata().streamSequence } == [1, 2, 3])
        try batch[0].ackSync()
        try batch[1].ackSync()
        try batch[2].nak()

        let redelivered = try consumer.fetch(batch: 10, timeout: .seconds(5))
        #expect(redelivered.count == 1)
        let again = try #require(redelivered.first)
        #expect(again.payload == Array("job-3".utf8))
        let meta = try again.metadata()
        #expect(meta.streamSequence == 3)
        #expect(meta.deliveries == 2)
        #expect(meta.stream == "WORK")
        #expect(meta.consumer == "workers")
        try again.ackSync()

        #expect(try consumer.fetch(batch: 10, timeout: .milliseconds(300)).isEmpty)
    }

    @Test func asyncFetchRunsOffTheCooperativePool() async throws {
        let server = try NATSServer()
        let js = try JetStream(connection: try server.connect())
        try js.addStream(StreamConfig(name: "ASYNC", subjects: ["async"], storage: .memory))
        let consumer = try js.pullConsumer(PullConsumerConfig(stream: "ASYNC", durable: "waiter"))

        // The fetch waits on the consumer's thread while this task publishes what it waits for.
        async let fetched = consumer.fetch(batch: 1, timeout: .seconds(10))
        try await js.publishAsync("async", Array("late".utf8))
        let messages = try await fetched
        #expect(messages.map(\.payload) == [Array("late".utf8)])
        try messages.first?.ackSync()
        #expect(try await consumer.fetch(batch: 5, timeout: .milliseconds(200)).isEmpty)
    }

    @Test func durableConsumerKeepsItsPositionAcrossBindings() throws {
        let server = try NATSServer()
        let js = try JetStream(connection: try server.connect())
        try js.addStream(StreamConfig(name: "KEEP", subjects: ["keep"], storage: .file))
        for index in 1...2 { try js.publish("keep", [UInt8(index)]) }
        do {
            let consumer = try js.pullConsumer(PullConsumerConfig(stream: "KEEP", durable: "d"))
            let first = try consumer.fetch(batch: 1, timeout: .seconds(5))
            #expect(first.map(\.payload) == [[1]])
            try first.first?.ackSync()
        }
        // The first binding is gone; the durable consumer is not.
        #expect(try js.streamInfo("KEEP").consumerCount == 1)
        let rebound = try js.pullConsumer(PullConsumerConfig(stream: "KEEP", durable: "d"))
        #expect(try rebound.fetch(batch: 5, timeout: .seconds(5)).map(\.payload) == [[2]])
    }
}

@Suite struct KeyValueTests {
    @Test func putGetRevisionsAndCompareAndSet() throws {
        let server = try NATSServer()
        let js = try JetStream(connection: try server.connect())
        let kv = try js.createKeyValue(KeyValueConfig(bucket: "leases", history: 5))

        #expect(try kv.get("plugin-a") == nil)
        let r1 = try kv.put("plugin-a", Array("owner=1".utf8))
        #expect(r1 == 1)
        #expect(try kv.get("plugin-a") == KeyValueEntry(key: "plugin-a", value: Array("owner=1".utf8), revision: 1))
        let r2 = try kv.put("plugin-a", Array("owner=2".utf8))
        #expect(r2 == 2)

        // A writer that read revision 1 lost the race.
        let stale = #expect(throws: NATSError.self) { try kv.update("plugin-a", Array("owner=3".utf8), expectedRevision: r1) }
        #expect(stale?.isWrongLastSequence == true)
        #expect(try kv.get("plugin-a")?.value == Array("owner=2".utf8))

        let r3 = try kv.update("plugin-a", Array("owner=3".utf8), expectedRevision: r2)
        #expect(r3 == 3)
        #expect(try kv.get("plugin-a")?.revision == 3)

        // Create only when absent.
        let taken = #expect(throws: NATSError.self) { try kv.create("plugin-a", [0]) }
        #expect(taken?.isWrongLastSequence == true)
        try kv.delete("plugin-a")
        #expect(try kv.get("plugin-a") == nil)
        let r5 = try kv.create("plugin-a", Array("owner=4".utf8))
        #expect(r5 == 5)

        // Another handle on the same bucket sees the same state.
        let bound = try js.keyValue("leases")
        #expect(try bound.get("plugin-a") == KeyValueEntry(key: "plugin-a", value: Array("owner=4".utf8), revision: 5))
        try js.deleteKeyValue("leases")
        #expect(throws: NATSError.self) { try js.keyValue("leases") }
    }

    @Test func versionCheckRejectsDebiansServer() {
        #expect(NATSServer.isRecentEnough("nats-server: v2.15.1"))
        #expect(NATSServer.isRecentEnough("nats-server: v2.16.0"))
        #expect(NATSServer.isRecentEnough("nats-server: v3.0.0"))
        #expect(!NATSServer.isRecentEnough("nats-server: v2.9.10"))
        #expect(!NATSServer.isRecentEnough("nats-server: v2.14.9"))
        #expect(!NATSServer.isRecentEnough(""))
    }
}
