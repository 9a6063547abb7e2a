import EventBus
import EventBusJetStream
import EventBusTesting
import Foundation
import NATS
import Testing

/// A consumer attached through the gateway gets every event of its stage once, in SEQ
/// order, with none left out, even when JetStream delivers out of order: a delivery that
/// never reached the gateway (lost with a connection or a consumer leader, or taken by a
/// fetch of the consumer's previous attachment still under way) is redelivered only after
/// the ack wait, while later events keep coming.
@Suite(.serialized) struct ConsumeOrderTests {
    /// The lost delivery is played by a fetch of this test on the same durable consumer,
    /// never acked. Before the fix the gateway sent 1, 3, 4, 5 and dropped 2 when it came
    /// again, as a SEQ below the last it had sent: a plugin folded its input without it.
    @Test func aDeliveryLostOnItsWayComesBeforeAnyLaterEvent() async throws {
        try await withDeadline(.seconds(120)) {
            let fixture = try GatewayFixture()
            defer { fixture.stop() }
            let (test, client) = (fixture.test, fixture.client)
            #expect(try await client.publish((1...5).map { GatewayTests.event("o\($0)") }) == [1, 2, 3, 4, 5])

            // CREDIT 1: the gateway fetches SEQ 1 and nothing more until it is acked.
            let consumer = try await client.consume(name: "folder", start: .earliest, credit: 1, prefixes: ["in/"])
            var seqs: [UInt64] = []
            var ids: [String] = []
            let connection = try Connection(ConnectOptions(servers: test.urls, allowReconnect: false))
            defer { connection.close() }
            var thief: PullConsumer?
            for try await delivery in consumer {
                seqs.append(delivery.seq)
                ids.append(try GatewayTests.id(of: delivery.event))
                if thief == nil {
                    // SEQ 2 delivered elsewhere and never acked: JetStream gives it again in 30 s.
                    let stolen = try PullConsumer(jetStream: try JetStream(connection: connection),
                                                  config: PullConsumerConfig(stream: StageStream(stage: "in").name,
                                                                             durable: DurableName.make("folder")),
                                                  create: false)
                    let taken = try await stolen.fetch(batch: 1, timeout: .seconds(5))
                    #expect(try taken.map { try $0.metadata().streamSequence } == [2])
                    thief = stolen
                }
                consumer.ack(delivery.seq)
                if delivery.seq >= 5 { break }
            }
            #expect(seqs == [1, 2, 3, 4, 5])
            #expect(ids == (1...5).map { "o\($0)" })
            withExtendedLifetime(thief) {}
        }
    }
}
