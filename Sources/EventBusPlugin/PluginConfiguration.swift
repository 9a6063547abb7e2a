import EventBus

/// Where a plugin connects, which stages it joins and how it batches.
///
/// A plugin executable reads it from its command line (``PluginOptions``): `eventbus up`
/// starts each plugin with `--name`, `--input`, `--output`, `--command` and `--data-dir`;
/// an external plugin passes the same by hand.
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
    /// CURVE keys for a broker with keys configured; ``PluginOptions/configuration(defaultName:)``
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
}
