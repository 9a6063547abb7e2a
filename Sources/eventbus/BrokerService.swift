import EventBusBroker
import Foundation
import Logging
import EventBusService
import ServiceLifecycle

/// Runs the broker under swift-service-lifecycle: `Broker.run()` on its own thread,
/// `Broker.stop()` on SIGTERM or SIGINT.
enum BrokerService {
    /// Starts `config`'s broker and runs it until SIGTERM or SIGINT.
    static func serve(config: BrokerConfig, logger: Logger, ready: (Broker) -> Void) async throws {
        let broker: Broker
        do {
            broker = try Broker(config: config, logger: logger)
        } catch {
            throw Output.fail(error, "cannot start the broker (command \(config.commandEndpoint), stream \(config.streamEndpoint), "
                + "data dir \(config.dataDirectory))")
        }
        ready(broker)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: BlockingService(name: "eventbus.broker", run: { try broker.run() }, stop: { broker.stop() }))],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
        logger.info("broker stopped")
    }
}
