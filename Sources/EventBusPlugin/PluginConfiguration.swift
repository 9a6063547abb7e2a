import EventBus

/// Where a plugin connects, which stages it joins and how it batches.
///
/// `eventbus up` starts each plugin with `--name`, `--input`, `--output`,
/// `--command` and `--data-dir`; an external plugin passes the same by hand.
public struct PluginConfiguration: Sendable {
    /// The consumer name (and by default the stage the plugin publishes to).
    public var name: String
    /// The stage consumed.
    public var inputStage: String
    /// The stage published to (`out` for the last plugin).
    public var outputStage: String
    /// The broker's command endpoint.
    public var commandEndpoint: String
    /// The plugin's own folder for its state.
    public var dataDirectory: String
    /// Events handled between two publishes.
    public var batchSize = 500
    /// Events the broker may send ahead of the ACK: room for the batches in flight and the next.
    public var credit = 5_000
    /// A snapshot after this many events (bounds the replay after a crash).
    public var snapshotEveryEvents = 50_000
    /// A snapshot at least this often while events flow, in seconds.
    public var snapshotIntervalSeconds = 10.0
    /// How long to wait for a confirm before reconnecting, in milliseconds.
    public var confirmTimeoutMilliseconds = 5_000
    /// The plugin-specific boolean flags given on the command line (such as
    /// `--reciprocity`), out of those the plugin declared to ``parse(_:defaultName:flags:)``.
    public var flags: Set<String> = []
    /// CURVE keys for a broker with keys configured; ``parse(_:defaultName:flags:)``
    /// reads them from the environment (`EVENTBUS_SECRET_KEY`, `EVENTBUS_SERVER_KEY`,
    /// as `eventbus up` sets them), never from the command line.
    public var curve: CurveClientKeys?
    /// Where to serve Prometheus metrics (`--metrics 127.0.0.1:9465`); none when nil.
    public var metricsAddress: String?

    /// A configuration with the given stages and defaults for the rest.
    public init(name: String, inputStage: String = Stage.in, outputStage: String = Stage.out,
                commandEndpoint: String = WireProtocol.defaultCommandEndpoint, dataDirectory: String = ".eventbus/plugins") {
        self.name = name
        self.inputStage = inputStage
        self.outputStage = outputStage
        self.commandEndpoint = commandEndpoint
        self.dataDirectory = dataDirectory
    }

    /// Reads `--name N --input S --output S --command EP --data-dir DIR --batch N --credit N
    /// --metrics ADDR` and the plugin's own boolean `flags`.
    ///
    /// Every option has a default: the plugin's own name, `in`, `out`, the
    /// default endpoint and `.eventbus/plugins/<name>`.
    ///
    /// - Parameters:
    ///   - arguments: The command line after the executable's name.
    ///   - defaultName: The plugin's name, used when `--name` is absent.
    ///   - flags: Boolean flags the plugin accepts (such as `--reciprocity`);
    ///     those given end up in ``flags``. Any other unknown option throws.
    public static func parse(_ arguments: [String], defaultName: String,
                             flags: Set<String> = []) throws(PluginError) -> PluginConfiguration {
        var values: [String: String] = [:]
        var given: Set<String> = []
        var index = 0
        let known: Set<String> = ["--name", "--input", "--output", "--command", "--data-dir", "--batch", "--credit", "--log-level", "--metrics"]
        while index < arguments.count {
            let option = arguments[index]
            if flags.contains(option) {
                given.insert(option)
                index += 1
                continue
            }
            guard known.contains(option) else {
                throw PluginError("unknown option \(option) (known: \(known.union(flags).sorted().joined(separator: " ")))",
                                  kind: .usage)
            }
            guard index + 1 < arguments.count else { throw PluginError("\(option) needs a value", kind: .usage) }
            values[option] = arguments[index + 1]
            index += 2
        }
        let name = values["--name"] ?? defaultName
        var configuration = PluginConfiguration(
            name: name, inputStage: values["--input"] ?? Stage.in, outputStage: values["--output"] ?? Stage.out,
            commandEndpoint: values["--command"] ?? WireProtocol.defaultCommandEndpoint,
            dataDirectory: values["--data-dir"] ?? ".eventbus/plugins/\(name)")
        if let batch = values["--batch"] {
            guard let value = Int(batch), value >= 1, value <= 10_000 else { throw PluginError("--batch must be 1 to 10000", kind: .usage) }
            configuration.batchSize = value
        }
        if let credit = values["--credit"] {
            guard let value = Int(credit), value >= 1, value <= WireProtocol.maxCredit else {
                throw PluginError("--credit must be 1 to \(WireProtocol.maxCredit)", kind: .usage)
            }
            configuration.credit = value
        }
        configuration.credit = max(configuration.credit, configuration.batchSize)
        configuration.flags = given
        do { configuration.curve = try CurveClientKeys.fromEnvironment() } catch { throw PluginError(error.description, kind: .usage) }
        configuration.metricsAddress = values["--metrics"]
        return configuration
    }
}
