import ArgumentParser
import Logging

/// `eventbus up`: the broker with the default pipeline. Plugin supervision is not there yet:
/// for now it runs the broker and logs which stages are configured.
struct UpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "up",
        abstract: "Run the broker with the pipeline (default receipt-reducer,read-privacy,delivery-privacy).",
        discussion: "Plugin processes are not started yet: run each plugin (or an external one) yourself.")

    /// The pipeline of SPEC.md when `--pipeline` is absent.
    static let defaultPipeline = "receipt-reducer,read-privacy,delivery-privacy"

    @OptionGroup var options: BrokerOptions

    @Option(help: ArgumentHelp("A configuration file (not supported yet).", valueName: "FILE"))
    var config: String?

    func validate() throws {
        if let config {
            throw ValidationError("--config \(config): configuration files are not supported yet; use the flags")
        }
    }

    func run() async throws {
        let logger = CLILogging.logger("eventbus.up", level: options.logLevel)
        let config = try options.config(defaultPipeline: Self.defaultPipeline)
        try await BrokerService.serve(config: config, logger: logger) { broker in
            let stages = (["in"] + config.pipeline + ["out"]).joined(separator: " -> ")
            logger.info("stages configured: \(stages)", metadata: ["bus.pipeline": "\(config.pipeline.joined(separator: ","))"])
            logger.info("broker serving: command \(broker.commandEndpoint), stream \(broker.streamEndpoint)", metadata: [
                "bus.command": "\(broker.commandEndpoint)", "bus.stream": "\(broker.streamEndpoint)",
            ])
        }
    }
}
