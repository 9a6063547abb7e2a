@testable import EventBusJetStream
import EventBus
import NATS
import Testing

/// How ``FetchWorker/attach(_:jetStream:)`` places a durable for each START, on a real server.
@Suite struct FetchWorkerTests {
    /// A skip ahead (an ACK beyond what was sent) past the stream's head starts the consumer
    /// at the head + 1, so that nothing published later is passed over; a CONSUME from a SEQ
    /// above the head starts there, as on the broker (docs/protocol.md "CONSUME").
    @Test func aSkipPastTheHeadStartsAtTheHeadPlusOne() async throws {
        let fixture = try GatewayFixture()
        defer { fixture.stop() }
        let (test, client) = (fixture.test, fixture.client)
        _ = try await client.publish((1...10).map { GatewayTests.event("h\($0)") })

        let connection = try Connection(ConnectOptions(servers: test.urls, allowReconnect: false))
        defer { connection.close() }
        let jetStream = try JetStream(connection: connection)
        func first(_ start: ConsumeRequest.Start, skipping: Bool, durable: String) throws -> UInt64 {
            let setup = FetchWorker.Setup(stream: StageStream(stage: "in"), durable: durable, start: start,
                                          ackWait: .seconds(5), atMostHeadPlusOne: skipping)
            let (consumer, first, made) = try FetchWorker.attach(setup, jetStream: jetStream)
            _ = consumer  // unsubscribed when released
            #expect(made)
            return first
        }
        #expect(try first(.sequence(1_001), skipping: true, durable: "skip-far") == 11)
        #expect(try first(.sequence(7), skipping: true, durable: "skip-near") == 7)
        #expect(try first(.sequence(1_001), skipping: false, durable: "from-seq") == 1_001)
    }

    /// `resume` binds to the durable as it is when everything delivered was acked; with
    /// events delivered and not acked (held by an attachment whose gateway died, which
    /// cannot nak them), it makes the durable again after the last ACK, so they come at
    /// once rather than after the ack wait (here an hour).
    @Test func aResumeWithEventsNeverAckedMakesTheConsumerAgainAfterTheLastAck() async throws {
        let fixture = try GatewayFixture()
        defer { fixture.stop() }
        let (test, client) = (fixture.test, fixture.client)
        _ = try await client.publish((1...5).map { GatewayTests.event("r\($0)") })

        let connection = try Connection(ConnectOptions(servers: test.urls, allowReconnect: false))
        defer { connection.close() }
        let jetStream = try JetStream(connection: connection)
        func attach(_ start: ConsumeRequest.Start) throws -> (PullConsumer, UInt64, Bool) {
            try FetchWorker.attach(FetchWorker.Setup(stream: StageStream(stage: "in"), durable: "held", start: start, ackWait: .seconds(3_600)),
                                   jetStream: jetStream)
        }
        func streamSequences(_ messages: [JetStreamMessage]) throws -> [UInt64] { try messages.map { try $0.metadata().streamSequence } }

        // A first attachment takes 1 to 3 and acks only 1 and 2.
        let (dead, first, _) = try attach(.earliest)
        #expect(first == 1)
        let taken = try await dead.fetch(batch: 3, timeout: .seconds(5))
        #expect(try streamSequences(taken) == [1, 2, 3])
        try taken[0].ackSync()
        try taken[1].ackSync()

        let (again, resumedAt, made) = try attach(.resume)
        #expect(made, "a durable with an event never acked is made again")
        #expect(resumedAt == 3)
        let redelivered = try await again.fetch(batch: 3, timeout: .seconds(5))
        #expect(try streamSequences(redelivered) == [3, 4, 5])

        // Everything delivered acked: bound as it is.
        for message in redelivered { try message.ackSync() }
        let (_, boundAt, madeAgain) = try attach(.resume)
        #expect(!madeAgain)
        #expect(boundAt == 6)
    }
}
