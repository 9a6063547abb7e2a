import Dispatch
import EventBus
import EventBusJetStream
import EventBusTesting
import Foundation
import Logging
import NATS
import Testing
import ZeroMQ

/// The gateway in this process, on a real cluster of 1 or 3 nats-servers, driven by the
/// Swift client as a backend would drive the broker.
@Suite(.serialized) struct GatewayTests {
    static func event(_ id: String, source: String = "/chat-api") -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"\#(id)","source":"\#(source)","type":"message.read","subject":"messaging:general","data":{"cid":"messaging:general","user_id":"bob","message_id":"\#(id)"}}"#.utf8)
    }

    static func id(of event: [UInt8]) throws -> String {
        try EventValidator.scanEnvelope(event).id
    }

    @Test(arguments: [1, 3]) func publishedEventsAreConfirmedOnceAndConsumedInOrder(nodes: Int) async throws {
        let fixture = try GatewayFixture(nodes: nodes)
        defer { fixture.stop() }
        let (test, client) = (fixture.test, fixture.client)

        #expect(try await client.publish((1...5).map { Self.event("e\($0)") }) == [1, 2, 3, 4, 5])
        #expect(try await client.publish((6...8).map { Self.event("e\($0)") }) == [6, 7, 8])
        // A repeat (same source and id) is confirmed with its first SEQ and stored once,
        // alone, with a new event, or twice in one batch.
        #expect(try await client.publish(Self.event("e2")) == 2)
        #expect(try await client.publish([Self.event("e3"), Self.event("e9"), Self.event("e9")]) == [3, 9, 9])
        // Another source with the same id is another identity.
        #expect(try await client.publish(Self.event("e1", source: "/other")) == 10)

        let consumer = try await client.consume(name: "reader.one", start: .earliest, credit: 4, prefixes: ["in/"])
        var seen: [(UInt64, String)] = []
        for try await delivery in consumer {
            #expect(delivery.topic == "in/messaging:general/message.read")
            seen.append((delivery.seq, try Self.id(of: delivery.event)))
            consumer.ack(delivery.seq)
            if seen.count == 10 { break }
        }
        #expect(seen.map(\.0) == Array(1...10))
        #expect(seen.map(\.1) == (1...9).map { "e\($0)" } + ["e1"])

        let connection = try Connection(ConnectOptions(servers: test.urls, allowReconnect: false))
        defer { connection.close() }
        let info = try JetStream(connection: connection).streamInfo(StageStream(stage: "in").name)
        #expect(info.messages == 10)
        #expect(info.config.replicas == nodes)
    }

    @Test func resumeContinuesAfterTheLastAck() async throws {
        let fixture = try GatewayFixture()
        defer { fixture.stop() }
        let client = fixture.client
        _ = try await client.publish((1...3).map { Self.event("r\($0)") })

        let first = try await client.consume(name: "plugin", start: .resume, credit: 10, prefixes: ["in/"])
        #expect(first.firstSeq == 1)
        for try await delivery in first {
            first.ack(delivery.seq)
            if delivery.seq == 3 { break }
        }
        try await first.cancel()
        _ = try await client.publish(Self.event("r4"))
        let again = try await client.consume(name: "plugin", start: .resume, credit: 10, prefixes: ["in/"])
        for try await delivery in again {
            #expect(delivery.seq == 4)
            #expect(try Self.id(of: delivery.event) == "r4")
            break
        }
    }

    /// docs/protocol.md "ACK": an ACK beyond the last SEQ sent skips ahead — the next EVT
    /// comes after it, and a later `resume` starts after it (the durable is made again
    /// after the SEQ; `FetchWorkerTests` checks that it never starts past the head + 1).
    @Test func anAckBeyondWhatWasSentSkipsAhead() async throws {
        try await withDeadline(.seconds(120)) {
            let fixture = try GatewayFixture()
            defer { fixture.stop() }
            let client = fixture.client
            _ = try await client.publish((1...10).map { Self.event("k\($0)") })

            // CREDIT 2: 1 and 2 are sent, then nothing until an ACK; ACK 6 skips 3 to 6.
            let consumer = try await client.consume(name: "skipper", start: .earliest, credit: 2, prefixes: ["in/"])
            var seen: [UInt64] = []
            for try await delivery in consumer {
                seen.append(delivery.seq)
                if delivery.seq == 2 { consumer.ack(6) }
                if seen.count == 4 { break }
            }
            #expect(seen == [1, 2, 7, 8])
            #expect(try await client.stats().isEmpty == false)  // the gateway still answers
            consumer.ack(8)
            try await consumer.cancel()

            // The durable's floor moved with the skip: resume starts after the last ACK.
            let again = try await client.consume(name: "skipper", start: .resume, credit: 2, prefixes: ["in/"])
            #expect(again.firstSeq == 9)
            for try await delivery in again {
                #expect(delivery.seq == 9)
                break
            }
        }
    }

    /// An ACK above the stage's head (which the broker refuses with `bad_args`) skips to the
    /// head: the durable is made again at head + 1, so the events published after the skip
    /// come, and a later `resume` starts after the last ACK.
    @Test func anAckAboveTheHeadSkipsToTheHead() async throws {
        try await withDeadline(.seconds(120)) {
            let fixture = try GatewayFixture()
            defer { fixture.stop() }
            let client = fixture.client
            _ = try await client.publish((1...5).map { Self.event("o\($0)") })
            let consumer = try await client.consume(name: "overshoot", start: .earliest, credit: 2, prefixes: ["in/"])
            var deliveries = consumer.makeAsyncIterator()
            #expect(try await deliveries.next()?.seq == 1)
            #expect(try await deliveries.next()?.seq == 2)
            consumer.ack(1_000)

            // The durable made again at 6 has its floor at 5 (at 1,000 had it been made at the
            // ACK's SEQ + 1); only then is more published, so the skip cannot pass it over.
            let connection = try Connection(ConnectOptions(servers: fixture.test.urls, allowReconnect: false))
            defer { connection.close() }
            let jetStream = try JetStream(connection: connection)
            var patience = Patience(.seconds(20))
            var floor: UInt64 = 0
            while floor < 5 {
                floor = (try? jetStream.consumerInfo(stream: StageStream(stage: "in").name, durable: DurableName.make("overshoot")))?
                    .ackFloorStreamSequence ?? 0
                guard patience.allowsAnotherLook() else { throw TestFailure("the durable was never made again past 5") }
                try await Task.sleep(for: .milliseconds(50))  // a poll interval
            }
            #expect(floor == 5)
            #expect(try await client.publish((6...8).map { Self.event("o\($0)") }) == [6, 7, 8])
            #expect(try await deliveries.next()?.seq == 6)
            #expect(try await deliveries.next()?.seq == 7)
            consumer.ack(7)
            try await consumer.cancel()

            let again = try await client.consume(name: "overshoot", start: .resume, credit: 2, prefixes: ["in/"])
            #expect(again.firstSeq == 8)
        }
    }

    /// The CREDIT alone bounds what a consumer has unacked, as on the broker: JetStream's
    /// own cap (`max_ack_pending`, 1,000 by default) and libzmq's queue to the peer (1,000
    /// messages by default) must not stop the EVTs short of it.
    @Test func aConsumerGetsItsWholeCreditWithoutAcking() async throws {
        try await withDeadline(.seconds(600)) {
            let fixture = try GatewayFixture()
            defer { fixture.stop() }
            let client = fixture.client
            for start in stride(from: 0, to: 2_500, by: 500) {
                _ = try await client.publish((start..<start + 500).map { Self.event("c\($0)") })
            }
            let consumer = try await client.consume(name: "greedy", start: .earliest, credit: 3_000, prefixes: ["in/"])
            var last: UInt64 = 0
            for try await delivery in consumer {
                last = delivery.seq
                if last == 2_500 { break }
            }
            #expect(last == 2_500, "delivery stopped short of the credit without an ACK")
        }
    }

    /// HELLO lists `ordered`, and answers `"ordered": true` whatever a connection asks: the
    /// gateway orders every connection's PUBs (docs/scale-out.md, "per-connection order").
    /// As on the broker, `ordered` must be a boolean.
    @Test func helloListsOrderedForEveryConnection() throws {
        let fixture = try GatewayFixture()
        defer { fixture.stop() }
        let socket = try Self.dealer(to: fixture.endpoint)
        func ask(_ json: String) throws -> [[UInt8]] {
            _ = try socket.send(["EB1", "HELLO", "h", json].map { Array($0.utf8) })
            return try #require(try socket.receive())
        }
        let refused = try ask(#"{"ordered":"yes"}"#).map { String(decoding: $0, as: UTF8.self) }
        #expect(refused.prefix(4) == ["EB1", "ERR", "h", "bad_args"], "\(refused)")
        #expect(refused.last?.contains("ordered") == true)
        for asked in [#"{"ordered":false}"#, #"{"ordered":true}"#, "{}"] {
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(try ask(asked)[3])) as? [String: Any])
            #expect((answer["features"] as? [String])?.contains("ordered") == true)
            #expect(answer["ordered"] as? Bool == true, "asked \(asked)")
        }
    }

    /// A DEALER connected to `endpoint` (30 s receive timeout); it keeps its context alive.
    static func dealer(to endpoint: String) throws -> Socket {
        let socket = try Socket(context: try Context(), type: .dealer)
        try socket.setReceiveTimeout(30_000)
        try socket.connect(endpoint)
        return socket
    }

    /// A request short of a frame is refused `bad_frame` naming the frame, in the broker's words
    /// (both take them from `CommandMessage.argument`).
    @Test func aMissingFrameIsNamedAsTheBrokerNamesIt() throws {
        let fixture = try GatewayFixture()
        defer { fixture.stop() }
        let socket = try Self.dealer(to: fixture.endpoint)
        for (request, text) in [(["ACK", "a"], "ACK: frame 3 (NAME) is missing"), (["ACK", "b", "reader"], "ACK: frame 4 (SEQ) is missing"),
                                (["CANCEL", "c"], "CANCEL: frame 3 (NAME) is missing"), (["PUB", "d"], "PUB: frame 3 (STAGE) is missing"),
                                (["CONSUME", "e", "reader"], "CONSUME: frame 4 (START) is missing")] {
            _ = try socket.send((["EB1"] + request).map { Array($0.utf8) })
            let answer = try #require(try socket.receive()).map { String(decoding: $0, as: UTF8.self) }
            #expect(answer == ["EB1", "ERR", request[1], "bad_frame", text], "\(request)")
        }
    }

    /// docs/protocol.md "Batched delivery (EVTS)", on the wire: a connection that asked for
    /// `batch` in HELLO gets its consumer's events in EVTS, in SEQ order, acked as EVTs are;
    /// one that did not gets EVT.
    @Test func aConsumerThatAskedForBatchesGetsEVTS() throws {
        let test = try TestCluster(nodes: 1)
        let running = try RunningGateway(GatewayConfig(servers: test.urls, commandEndpoint: "tcp://127.0.0.1:*"))
        defer { running.stop() }
        let context = try Context()
        func dealer() throws -> Socket {
            let socket = try Socket(context: context, type: .dealer)
            try socket.setReceiveTimeout(30_000)
            try socket.connect(running.gateway.commandEndpoint)
            return socket
        }
        func frames(_ texts: [String], _ events: [[UInt8]] = []) -> [[UInt8]] { texts.map { Array($0.utf8) } + events }
        let batched = try dealer()
        // docs/protocol.md, HELLO: `batch` must be a boolean.
        _ = try batched.send(frames(["EB1", "HELLO", "h0", #"{"batch":1}"#]))
        let refused = try #require(try batched.receive()).map { String(decoding: $0, as: UTF8.self) }
        #expect(refused.prefix(4) == ["EB1", "ERR", "h0", "bad_args"], "\(refused)")
        _ = try batched.send(frames(["EB1", "HELLO", "h", #"{"batch":true}"#]))
        let hello = try #require(try batched.receive())
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(hello[3])) as? [String: Any])
        #expect(answer["batch"] as? Bool == true)
        #expect((answer["features"] as? [String])?.contains("batch") == true)
        _ = try batched.send(frames(["EB1", "PUB", "p", "in"], (1...5).map { Self.event("b\($0)") }))
        #expect(try #require(try batched.receive())[1] == Array("OK".utf8))

        _ = try batched.send(frames(["EB1", "CONSUME", "c", "batched", "earliest", "10", "in/"]))
        #expect(try #require(try batched.receive()).map { String(decoding: $0, as: UTF8.self) } == ["EB1", "OK", "c", "1"])
        var seqs: [UInt64] = [], ids: [String] = []
        while seqs.count < 5 {
            let message = try #require(try batched.receive())
            #expect(message.count == 4 && message[1] == Verb.evts.bytes && message[2] == Array("batched".utf8))
            var topics: Set<[UInt8]> = []
            let wellFormed = DeliveryBatch.decode(message[3]) { seq, topic, event in
                seqs.append(seq)
                ids.append((try? Self.id(of: Array(event))) ?? "?")
                topics.insert(Array(topic))
            }
            #expect(wellFormed)
            #expect(topics == [Array("in/messaging:general/message.read".utf8)])
        }
        #expect(seqs == [1, 2, 3, 4, 5])
        #expect(ids == (1...5).map { "b\($0)" })
        _ = try batched.send(frames(["EB1", "ACK", "", "batched", "5"]))
        _ = try batched.send(frames(["EB1", "CANCEL", "x", "batched"]))
        #expect(try #require(try batched.receive()).prefix(3).map { String(decoding: $0, as: UTF8.self) } == ["EB1", "OK", "x"])

        // Acked: resuming the name delivers nothing before the next event, and a connection
        // that did not ask for batches gets it as an EVT.
        let plain = try dealer()
        _ = try plain.send(frames(["EB1", "CONSUME", "c", "batched", "resume", "10", "in/"]))
        #expect(try #require(try plain.receive()).map { String(decoding: $0, as: UTF8.self) } == ["EB1", "OK", "c", "6"])
        _ = try plain.send(frames(["EB1", "PUB", "p", "in"], [Self.event("b6")]))
        var evt = try #require(try plain.receive())
        if evt[1] == Array("OK".utf8) { evt = try #require(try plain.receive()) }
        #expect(evt.count == 6 && evt[1] == Verb.evt.bytes && evt[3] == Array("6".utf8))
    }

    @Test func withoutQuorumAPubIsAnsweredBusy() async throws {
        let fixture = try GatewayFixture(nodes: 3, clientTimeout: .seconds(60)) { $0.requestTimeout = .seconds(2) }
        defer { fixture.stop() }
        let (test, client) = (fixture.test, fixture.client)
        #expect(try await client.publish(Self.event("q1")) == 1)
        for node in ["n2", "n3"] {
            if let pid = test.cluster.processIdentifier(of: node) { kill(pid, SIGKILL) }
        }
        let error = await #expect(throws: BusError.self) { try await client.publish(Self.event("q2")) }
        #expect(error?.code == .busy)
    }

    @Test func anUnreachableClusterIsNamed() {
        let address = "nats://127.0.0.1:1"
        let error = #expect(throws: GatewayError.self) {
            try Gateway(config: GatewayConfig(servers: [address], commandEndpoint: "tcp://127.0.0.1:*"), logger: Logger(label: "test"))
        }
        #expect(error?.description.contains(address) == true)
    }
}
