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
        let test = try TestCluster(nodes: 1)
        let running = try RunningGateway(GatewayConfig(servers: test.urls, commandEndpoint: "tcp://127.0.0.1:*"))
        defer { running.stop() }
        let client = try BusClient(options: BusClientOptions(endpoint: running.gateway.commandEndpoint, requestTimeout: .seconds(30)))
        defer { client.close() }
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
}
