import EventBus
import EventBusJetStream
import EventBusTesting
import Foundation
import NATS
import Testing

/// What a dead gateway had sent and not had acked comes back at once to the consumer's
/// next attachment, on any gateway (its `resume` makes the durable again after the last
/// ACK), not after the ack wait; the EVTs a live gateway's client holds are kept from
/// redelivery however long the client takes (marked in progress every third of it).
@Suite(.serialized) struct AckWaitTests {
    @Test func eventsAClientHoldsAreNotRedeliveredWhileItsGatewayLives() async throws {
        try await withDeadline(.seconds(120)) {
            let fixture = try GatewayFixture { $0.ackWait = .seconds(1) }
            defer { fixture.stop() }
            let (test, client) = (fixture.test, fixture.client)
            #expect(try await client.publish((1...3).map { GatewayTests.event("h\($0)") }) == [1, 2, 3])
            let consumer = try await client.consume(name: "slow", start: .earliest, credit: 10, prefixes: ["in/"])
            var seqs: [UInt64] = []
            for try await delivery in consumer {
                seqs.append(delivery.seq)
                if seqs.count == 3 { break }
            }
            // Held unacked for four ack waits, JetStream's count of redeliveries looked at
            // all along.
            let connection = try Connection(ConnectOptions(servers: test.urls, allowReconnect: false))
            defer { connection.close() }
            let jetStream = try JetStream(connection: connection)
            let clock = ContinuousClock()
            let held = clock.now
            var info = try jetStream.consumerInfo(stream: StageStream(stage: "in").name, durable: DurableName.make("slow"))
            while clock.now - held < .seconds(4) && info.redelivered == 0 {
                try await Task.sleep(for: .milliseconds(200))  // a poll interval
                info = try jetStream.consumerInfo(stream: StageStream(stage: "in").name, durable: DurableName.make("slow"))
            }
            #expect(info.redelivered == 0, "JetStream redelivered \(info.redelivered) events the client still held")
            #expect(info.ackPending == 3)
            consumer.ack(3)
            try await consumer.cancel()
        }
    }

    @Test func whatADeadGatewayHadSentComesBackAtOnce() async throws {
        try await withDeadline(.seconds(120)) {
            let test = try TestCluster(nodes: 1)
            let directory = test.directory
            // An ack wait of an hour: only a consumer made again gives 2 and 3 within the test.
            let arguments = ["--backend", test.urls.joined(separator: ","), "--log-level", "warning", "--ack-wait", "3600"]
            let first = try GatewayProcessTests.gateway(arguments + ["--endpoint", "ipc://\(directory)/first.sock"])
            defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
            let publisher = try BusClient(options: BusClientOptions(endpoint: "ipc://\(directory)/first.sock", requestTimeout: .seconds(30)))
            defer { publisher.close() }
            #expect(try await publisher.publish((1...3).map { GatewayTests.event("d\($0)") }) == [1, 2, 3])
            let consumer = try await publisher.consume(name: "mover", start: .earliest, credit: 10, prefixes: ["in/"])
            var seqs: [UInt64] = []
            for try await delivery in consumer {
                seqs.append(delivery.seq)
                if seqs.count == 3 { break }
            }
            consumer.ack(1)
            let connection = try Connection(ConnectOptions(servers: test.urls, allowReconnect: false))
            defer { connection.close() }
            let jetStream = try JetStream(connection: connection)
            var patience = Patience(.seconds(10))
            while try jetStream.consumerInfo(stream: StageStream(stage: "in").name, durable: DurableName.make("mover"))
                .ackFloorStreamSequence < 1 {
                guard patience.allowsAnotherLook() else { throw TestFailure("the ACK of SEQ 1 never reached JetStream") }
                try await Task.sleep(for: .milliseconds(50))  // a poll interval
            }
            kill(first.processIdentifier, SIGKILL)
            try GatewayProcessTests.reap(first)

            // Another gateway; the consumer resumes there and gets 2 and 3 again at once.
            let second = try GatewayProcessTests.gateway(arguments + ["--endpoint", "ipc://\(directory)/second.sock"])
            defer { if second.isRunning { kill(second.processIdentifier, SIGKILL) } }
            let client = try BusClient(options: BusClientOptions(endpoint: "ipc://\(directory)/second.sock", requestTimeout: .seconds(30)))
            defer { client.close() }
            // Within the test's deadline (2 min), far inside the ack wait (an hour): only the
            // durable made again gives them.
            let resumed = try await client.consume(name: "mover", start: .resume, credit: 10, prefixes: ["in/"])
            var again: [UInt64] = []
            for try await delivery in resumed {
                again.append(delivery.seq)
                if again.count == 2 { break }
            }
            #expect(again == [2, 3])
            resumed.ack(3)
        }
    }
}
