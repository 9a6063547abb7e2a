import EventBusBroker
import Foundation
import Logging
import ServiceLifecycle

/// The broker as a ServiceLifecycle service: `Broker.run()` on a dedicated thread,
/// `Broker.stop()` on graceful shutdown.
struct BrokerService: Service {
    let broker: Broker
    let logger: Logger

    func run() async throws {
        let broker = self.broker
        try await withGracefulShutdownHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let thread = Thread {
                    do {
                        try broker.run()
                        continuation.resume()
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
                thread.name = "eventbus.broker"
                thread.start()
            }
        } onGracefulShutdown: {
            broker.stop()
        }
        logger.info("broker stopped")
    }

    /// Starts `config`'s broker and runs it until SIGTERM or SIGINT.
    static func serve(config: BrokerConfig, logger: Logger, ready: (Broker) -> Void) async throws {
        let broker: Broker
        do {
            broker = try Broker(config: config, logger: logger)
        } catch {
            throw Output.fail("cannot start the broker (command \(config.commandEndpoint), stream \(config.streamEndpoint), "
                + "data dir \(config.dataDirectory)): \(error)")
        }
        ready(broker)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: BrokerService(broker: broker, logger: logger))],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
    }
}
