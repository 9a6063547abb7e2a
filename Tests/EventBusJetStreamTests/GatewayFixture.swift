import EventBus
import EventBusJetStream

/// What most gateway tests start with: a real cluster of `nodes`, a gateway serving on it
/// (on a loopback port the system picks) and a client of that gateway. ``stop()`` closes
/// the client, then stops the gateway; the cluster stops when the fixture goes. Call it
/// in a `defer` right after making the fixture, which keeps the fixture alive until then.
final class GatewayFixture: Sendable {
    let test: TestCluster
    let running: RunningGateway
    let client: BusClient

    /// - Parameters:
    ///   - clientTimeout: the client's request timeout.
    ///   - configure: changes to the gateway's configuration (its request timeout, ack wait,
    ///     pipeline) before it starts.
    init(nodes: Int = 1, clientTimeout: Duration = .seconds(30), _ configure: (inout GatewayConfig) -> Void = { _ in }) throws {
        test = try TestCluster(nodes: nodes)
        var config = GatewayConfig(servers: test.urls, commandEndpoint: "tcp://127.0.0.1:*")
        configure(&config)
        running = try RunningGateway(config)
        do {
            client = try BusClient(options: BusClientOptions(endpoint: running.gateway.commandEndpoint, requestTimeout: clientTimeout))
        } catch {
            running.stop()
            throw error
        }
    }

    /// The gateway's command endpoint, for more clients or raw sockets.
    var endpoint: String { running.gateway.commandEndpoint }

    func stop() {
        client.close()
        running.stop()
    }
}
