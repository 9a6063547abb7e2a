import DequeModule
import EventBusTesting
import EventBus
import EventBusJetStream
import Foundation
import Logging
import NATS
import Testing
import ZeroMQ

/// The stream leader SIGKILLed while one client publishes pipelined PUBs and resends
/// those answered `busy`: every confirmed event is stored once, in publish order. The
/// gateway sends the PUBs a connection has queued together, several to an atomic batch
/// (OrderedPublisher's flights), so the kill hits batches that carry several PUBs.
@Suite(.serialized) struct FailoverTests {
    @Test func killingTheStreamLeaderKeepsEachPublishersOrder() async throws {
        let test = try TestCluster(nodes: 3)
        let running = try RunningGateway(GatewayConfig(servers: test.urls, commandEndpoint: "tcp://127.0.0.1:*",
                                                       requestTimeout: .seconds(2)))
        defer { running.stop() }
        let stream = StageStream(stage: "in").name
        let connection = try Connection(ConnectOptions(servers: test.urls, maxReconnect: -1, reconnectWait: .milliseconds(200)))
        defer { connection.close() }
        let jetStream = try JetStream(connection: connection, options: JetStreamOptions(requestTimeout: .seconds(2)))

        // 4,000 events in PUBs of 25, sixteen PUBs in flight; a PUB answered busy is sent again
        // before any PUB not sent yet, in publish order.
        let batches = (0..<160).map { batch in (0..<25).map { "f\(batch * 25 + $0)" } }
        let context = try Context()
        let socket = try Socket(context: context, type: .dealer)
        try socket.setReceiveTimeout(30_000)
        try socket.connect(running.gateway.commandEndpoint)
        var toSend = Deque(batches.indices)
        var inFlight: [String: Int] = [:]
        var confirmed: [String: UInt64] = [:]
        var busyAnswers = 0
        var killed: String?
        var nextCorrelation = 0
        var inFlightAtKill = 0
        while confirmed.count < 4_000 {
            while inFlight.count < 16, let batch = toSend.popFirst() {
                nextCorrelation += 1
                let correlation = "c\(nextCorrelation)"
                inFlight[correlation] = batch
                _ = try socket.send([WireProtocol.signature, Array("PUB".utf8), Array(correlation.utf8), Array("in".utf8)]
                    + batches[batch].map { GatewayTests.event($0) })
            }
            let reply = try #require(try socket.receive())
            let correlation = String(decoding: reply[2], as: UTF8.self)
            let removed = inFlight.removeValue(forKey: correlation)
            let batch = try #require(removed)
            if reply[1] == Array("OK".utf8) {
                for (id, seq) in zip(batches[batch], reply.dropFirst(3)) { confirmed[id] = UInt64(String(decoding: seq, as: UTF8.self)) }
            } else {
                #expect(String(decoding: reply[3], as: UTF8.self) == "busy")
                busyAnswers += 1
                toSend.append(batch)
                toSend = Deque(toSend.sorted())
            }
            if killed == nil, confirmed.count >= 1_000 {
                let leader = try #require(try jetStream.streamInfo(stream).leader)
                let pid = try #require(test.cluster.processIdentifier(of: leader))
                kill(pid, SIGKILL)
                killed = leader
                inFlightAtKill = inFlight.count
            }
        }
        let leader = try #require(killed)
        try test.cluster.restart(leader)
        // The PUBs went several to a batch: fewer batches than PUBs.
        _ = try socket.send(["EB1", "STATS", "s"].map { Array($0.utf8) })
        let stats = try #require(try socket.receive())
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(stats[3])) as? [String: Any])
        let sent = try #require(figures["batches_sent"] as? Int), pubs = try #require(figures["pubs_batched"] as? Int)
        #expect(pubs >= batches.count && sent < pubs, "\(pubs) PUBs in \(sent) batches")
        #expect(inFlightAtKill > 1)
        Logger(label: "test.failover").notice("PUBs answered busy around the kill", metadata: [
            "bus.count": "\(busyAnswers)", "nats.node": "\(leader)", "bus.in_flight": "\(inFlightAtKill)",
            "bus.pubs": "\(pubs)", "nats.batches": "\(sent)",
        ])

        // Read the stream as each node sees it: each node made leader in turn.
        let expected = batches.flatMap { $0 }
        var checked: Set<String> = []
        for node in ["n1", "n2", "n3"] {
            try await makeLeader(node, stream: stream, jetStream: jetStream, connection: connection)
            let ids = try readAll(stream, jetStream: jetStream, durable: "check-\(node)")
            #expect(ids.count == expected.count, "on \(node)")
            #expect(ids == expected, "on \(node): stream order differs from publish order")
            for (index, id) in ids.enumerated() where confirmed[id] != nil {
                #expect(confirmed[id] == UInt64(index + 1), "\(id) confirmed as \(confirmed[id]!), stored at \(index + 1)")
            }
            checked.insert(node)
        }
        #expect(checked.count == 3)
    }

    /// A CONSUME made right after the stream's leader was SIGKILLed, while its followers
    /// wait 4–9 s before electing another: the set-up's JetStream calls made during the
    /// election go unanswered, and are tried again with short waits, so the CONSUME is
    /// answered OK soon after the election. With one call waiting the whole request
    /// timeout (30 s here), it was answered `busy` after it.
    @Test func aConsumeDuringAnElectionIsAnsweredSoonAfterIt() async throws {
        try await withDeadline(.seconds(120)) {
            let fixture = try GatewayFixture(nodes: 3, clientTimeout: .seconds(60)) { $0.requestTimeout = .seconds(30) }
            defer { fixture.stop() }
            let (test, client) = (fixture.test, fixture.client)
            #expect(try await client.publish((1...3).map { GatewayTests.event("e\($0)") }) == [1, 2, 3])

            let stream = StageStream(stage: "in").name
            let connection = try Connection(ConnectOptions(servers: test.urls, allowReconnect: false))
            defer { connection.close() }
            let leader = try #require(try JetStream(connection: connection).streamInfo(stream).leader)
            let pid = try #require(test.cluster.processIdentifier(of: leader))
            kill(pid, SIGKILL)

            let clock = ContinuousClock()
            let asked = clock.now
            let consumer = try await client.consume(name: "during-election", start: .earliest, credit: 10, prefixes: ["in/"])
            let answered = clock.now - asked
            var seqs: [UInt64] = []
            for try await delivery in consumer {
                seqs.append(delivery.seq)
                if seqs.count == 3 { break }
            }
            #expect(seqs == [1, 2, 3])
            Logger(label: "test.failover").notice("CONSUME answered during an election", metadata: [
                "nats.node": "\(leader)", "bus.waited": "\(answered)",
            ])
            consumer.ack(3)
        }
    }

    /// Steps the stream's leader down until `node` leads it (the election picks at random).
    func makeLeader(_ node: String, stream: String, jetStream: JetStream, connection: Connection) async throws {
        for _ in 0..<60 {
            if let info = try? jetStream.streamInfo(stream), info.leader == node, info.lastSequence > 0 { return }
            _ = try? connection.request("$JS.API.STREAM.LEADER.STEPDOWN.\(stream)",
                                        Array(#"{"placement":{"preferred":"\#(node)"}}"#.utf8), timeout: .seconds(2))
            try await Task.sleep(for: .milliseconds(500))  // a poll interval
        }
        throw TestFailure("\(node) never became the leader of \(stream)")
    }

    /// Every message's event id, in stream order, through a new durable consumer; only the
    /// events `including` keeps, when given.
    func readAll(_ stream: String, jetStream: JetStream, durable: String,
                 including: (EnvelopeFields) -> Bool = { _ in true }) throws -> [String] {
        try readAllEvents(stream, jetStream: jetStream, durable: durable, including: including).map { $0.id }
    }

    /// Every message's event, in stream order, with its envelope; only those `including` keeps.
    func readAllEvents(_ stream: String, jetStream: JetStream, durable: String,
                       including: (EnvelopeFields) -> Bool = { _ in true }) throws -> [(id: String, event: [UInt8])] {
        // Right after a leader change the consumer's creation may time out: asked again.
        var made: PullConsumer?
        for _ in 0..<10 where made == nil {
            made = try? PullConsumer(jetStream: jetStream, config: PullConsumerConfig(stream: stream, durable: durable))
            if made == nil { Thread.sleep(forTimeInterval: 1) }  // a poll interval
        }
        let consumer = try #require(made)
        let last = try jetStream.streamInfo(stream).lastSequence
        var events: [(id: String, event: [UInt8])] = []
        var read: UInt64 = 0, empty = 0, unanswered = 0
        while read < last && empty < 20 {
            // A consumer just made may have no leader yet (seen once on a loaded machine: "No
            // responders available for request"): asked again, for up to about 10 s.
            var messages: [JetStreamMessage] = []
            do {
                messages = try consumer.fetch(batch: 500, timeout: .seconds(1))
            } catch {
                guard error.isNoResponders, unanswered < 50 else { throw error }
                unanswered += 1
                Thread.sleep(forTimeInterval: 0.2)  // a poll interval
                continue
            }
            if messages.isEmpty { empty += 1 }
            for message in messages {
                read += 1
                let envelope = try EventValidator.scanEnvelope(message.payload)
                if including(envelope) { events.append((envelope.id, message.payload)) }
                try message.ack()
            }
        }
        return events
    }
}
