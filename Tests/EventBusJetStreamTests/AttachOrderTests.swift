import EventBus
import EventBusJetStream
import EventBusTesting
import Foundation
import Testing

/// One attach at a time per NAME in the gateway (``FetchWorker``): CONSUMEs of one NAME
/// from several peers at once each set the durable up in turn, after the one before it has
/// stopped, instead of deleting and creating each other's durable; one taken over before
/// its OK is answered at once.
@Suite(.serialized) struct AttachOrderTests {
    @Test func consumesOfOneNameAtOnceEachGetAnAnswerAndTheLastGetsEverything() async throws {
        try await withDeadline(.seconds(180)) {
            let fixture = try GatewayFixture()
            defer { fixture.stop() }
            let options = BusClientOptions(endpoint: fixture.endpoint, requestTimeout: .seconds(30))
            let publisher = fixture.client
            #expect(try await publisher.publish((1...5).map { GatewayTests.event("a\($0)") }) == [1, 2, 3, 4, 5])

            // Six rounds of four new peers taking the name over at once, each from the start:
            // every set-up deletes the durable and makes it again.
            var everyClient: [BusClient] = []
            defer { for client in everyClient { client.close() } }
            var refusals: [String] = []
            for _ in 0..<6 {
                let clients = try (0..<4).map { _ in try BusClient(options: options) }
                everyClient += clients
                let errors = await withTaskGroup(of: BusError?.self) { group in
                    for client in clients {
                        group.addTask {
                            do throws(BusError) {
                                _ = try await client.consume(name: "taken", start: .earliest, credit: 10, prefixes: ["in/"])
                                return nil
                            } catch {
                                return error
                            }
                        }
                    }
                    var errors: [BusError] = []
                    for await error in group { if let error { errors.append(error) } }
                    return errors
                }
                // A CONSUME taken over before its OK is answered busy at once ("taken over");
                // none may fail to set the durable up, nor wait for a reply until it times out.
                refusals += errors.filter { !($0.code == .busy && $0.message.contains("taken over")) }.map { "\($0)" }
            }
            #expect(refusals.isEmpty, "CONSUMEs refused but for a takeover: \(refusals)")

            // The last to take it gets every event, in order, from the start.
            let last = try BusClient(options: options)
            defer { last.close() }
            let consumer = try await last.consume(name: "taken", start: .earliest, credit: 10, prefixes: ["in/"])
            var seqs: [UInt64] = []
            for try await delivery in consumer {
                seqs.append(delivery.seq)
                consumer.ack(delivery.seq)
                if delivery.seq >= 5 { break }
            }
            #expect(seqs == [1, 2, 3, 4, 5])
        }
    }
}
