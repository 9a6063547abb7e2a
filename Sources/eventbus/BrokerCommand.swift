import ArgumentParser
import Logging

/// `eventbus broker`: the broker alone; plugins are started elsewhere.
struct BrokerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broker",
        abstract: "Run the broker alone (plugins started elsewhere). SIGTERM/SIGINT stop it cleanly.")

    @OptionGroup var options: BrokerOptions

    func run() async throws {
        let logger = CLILogging.logger("eventbus.broker", level: options.logLevel)
        let config = try options.config()
        let metrics = try options.startMetrics(logger: logger)
        defer { metrics?.stop() }
        try await BrokerService.serve(config: config, logger: logger) { broker in
            logger.info("broker serving: command \(broker.commandEndpoint), stream \(broker.streamEndpoint)", metadata: [
                "bus.command": "\(broker.commandEndpoint)", "bus.stream": "\(broker.streamEndpoint)",
                "bus.pipeline": "\(config.pipeline.joined(separator: ","))",
            ])
        }
    }
}
