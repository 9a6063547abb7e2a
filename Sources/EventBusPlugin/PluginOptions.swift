import ArgumentParser
import EventBus
import Logging

/// The options every plugin executable takes, parsed with swift-argument-parser like the
/// `eventbus` command line (docs/plugins.md):
///
/// `--name N --input STAGE --output STAGE --command EP --data-dir DIR --batch N
/// --credit N --log-level LEVEL --metrics ADDR`
///
/// Every option has a default: the plugin's own name, `in`, `out`, the default endpoint,
/// `.eventbus/plugins/<name>`, 500, 5,000, `info` and no metrics. `eventbus up` passes the
/// first five. ``PluginMain/run(_:arguments:)`` reads these alone; a plugin with options
/// of its own declares them beside these in a ``PluginArguments`` type.
public struct PluginOptions: PluginArguments {
    @Option(help: ArgumentHelp("The consumer name, by which the broker keeps its offset (default: the plugin's name).",
                               valueName: "NAME"))
    public var name: String?

    @Option(help: ArgumentHelp("The stage consumed.", valueName: "STAGE"))
    public var input: String = Stage.in

    @Option(help: ArgumentHelp("The stage published to (out for the last plugin).", valueName: "STAGE"))
    public var output: String = Stage.out

    @Option(name: .customLong("command"), help: ArgumentHelp("The broker's command endpoint.", valueName: "EP"))
    public var commandEndpoint: String = WireProtocol.defaultCommandEndpoint

    @Option(name: .customLong("data-dir"),
            help: ArgumentHelp("The plugin's own folder for its state and lock (default: .eventbus/plugins/NAME).",
                               valueName: "DIR"))
    public var dataDirectory: String?

    @Option(help: ArgumentHelp("Events handled between two publishes, 1 to 10000.", valueName: "N"))
    public var batch: Int = 500

    @Option(help: ArgumentHelp("Events the broker may send ahead of the ACK, 1 to 65536 (at least --batch).",
                               valueName: "N"))
    public var credit: Int = 5_000

    @Option(help: ArgumentHelp("Log level on stderr (trace, debug, info, notice, warning, error, critical).",
                               valueName: "LEVEL"))
    public var logLevel: String = "info"

    @Option(help: ArgumentHelp("Serve Prometheus metrics on this loopback address, such as 127.0.0.1:9465.",
                               valueName: "ADDR"))
    public var metrics: String?

    public init() {}

    /// These options themselves.
    public var plugin: PluginOptions { self }

    public func validate() throws {
        guard (1...10_000).contains(batch) else { throw ValidationError("--batch must be 1 to 10000") }
        guard (1...WireProtocol.maxCredit).contains(credit) else {
            throw ValidationError("--credit must be 1 to \(WireProtocol.maxCredit)")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    /// `--log-level` (validated by ``validate()``).
    public var level: Logger.Level { Logger.Level(rawValue: logLevel) ?? .info }

    /// The configuration of a plugin called `defaultName` (unless `--name` says otherwise),
    /// with the CURVE keys of the environment (`EVENTBUS_SECRET_KEY`, `EVENTBUS_SERVER_KEY`,
    /// as `eventbus up` sets them), never of the command line.
    ///
    /// - Throws: A ``PluginError`` of kind ``PluginError/Kind/usage`` for keys that cannot be read.
    public func configuration(defaultName: String) throws(PluginError) -> PluginConfiguration {
        let name = self.name ?? defaultName
        var configuration = PluginConfiguration(
            name: name, inputStage: input, outputStage: output, commandEndpoint: commandEndpoint,
            dataDirectory: dataDirectory ?? ".eventbus/plugins/\(name)")
        configuration.batchSize = batch
        configuration.credit = max(credit, batch)
        configuration.metricsAddress = metrics
        do {
            configuration.curve = try CurveClientKeys.fromEnvironment()
        } catch {
            throw PluginError(error.description, kind: .usage)
        }
        return configuration
    }
}
