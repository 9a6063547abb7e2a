import ArgumentParser
import EventBus
import EventBusBroker
import EventBusMetrics
import EventBusSupervisor
import Logging

/// The flags of the commands that run a broker (`broker` and `up`).
struct BrokerOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Where the log and consumer offsets live (default .eventbus).", valueName: "DIR"))
    var dataDir: String?

    @Option(name: .customLong("command"), help: ArgumentHelp("The command endpoint to bind (ROUTER; default tcp://127.0.0.1:7750).", valueName: "EP"))
    var commandEndpoint: String?

    @Option(name: .customLong("stream"), help: ArgumentHelp("The stream endpoint to bind (XPUB; default tcp://127.0.0.1:7751).", valueName: "EP"))
    var streamEndpoint: String?

    @Option(help: ArgumentHelp(
        "Plugin stages between in and out, comma-separated; external:NAME for a plugin that connects by itself.",
        valueName: "a,b,c"))
    var pipeline: String?

    @Option(help: "When to fsync the log: always (default), periodic or off.")
    var fsync: FsyncPolicy?

    @Option(help: ArgumentHelp("The fsync period with --fsync periodic.", valueName: "N"))
    var fsyncIntervalMs: Int = 100

    @Option(help: ArgumentHelp("The size of a log segment in bytes.", valueName: "N"))
    var segmentBytes: Int?

    @Option(help: ArgumentHelp("Delete old segments beyond this many bytes.", valueName: "N"))
    var retentionBytes: UInt64?

    @Option(help: ArgumentHelp("Delete segments older than this.", valueName: "SECONDS"))
    var retentionAge: Double?

    @Option(help: ArgumentHelp("The largest event in bytes.", valueName: "N"))
    var maxEventBytes: Int = WireProtocol.defaultMaxEventBytes

    @Option(help: ArgumentHelp("How long a REQ waits for its service.", valueName: "N"))
    var requestTimeoutMs: Int = 5_000

    @Option(help: ArgumentHelp("Memory for the newest events, served to consumers without a log read (default 256).", valueName: "MB"))
    var cacheMb: Int?

    @Option(help: ArgumentHelp("Messages queued per stream subscriber before it misses events (default 100000).", valueName: "N"))
    var streamHwm: Int32?

    @Option(help: ArgumentHelp("Messages queued to or from one command peer before its replies are dropped or its input waits (default 100000).", valueName: "N"))
    var peerHwm: Int32?

    @Option(help: ArgumentHelp(
        "Serve Prometheus metrics over HTTP at http://ADDR/metrics (loopback only, e.g. 127.0.0.1:9464; port 0 picks one).",
        valueName: "ADDR"))
    var metrics: String?

    @Option(help: "Log level on stderr (trace, debug, info, notice, warning, error, critical).")
    var logLevel: Logger.Level = .info

    @Option(help: ArgumentHelp(
        "A YAML security file: the broker's secret key file and the admitted client keys with their roles (docs/security.md).",
        valueName: "FILE"))
    var security: String?

    @Flag(help: "Without --security, allow binding addresses other than loopback and ipc: anyone who reaches them may do anything.")
    var allowInsecureBind = false

    @Flag(help: "Use a data directory that group or others may read, write or enter (refused otherwise): they can read every event in the log.")
    var allowSharedDataDir = false

    func validate() throws {
        if fsyncIntervalMs <= 0 { throw ValidationError("--fsync-interval-ms must be positive") }
        if let segmentBytes, segmentBytes <= 0 { throw ValidationError("--segment-bytes must be positive") }
        if let retentionAge, retentionAge <= 0 { throw ValidationError("--retention-age must be positive") }
        if let cacheMb, cacheMb <= 0 { throw ValidationError("--cache-mb must be positive") }
        if let streamHwm, streamHwm <= 0 { throw ValidationError("--stream-hwm must be positive") }
        if let peerHwm, peerHwm <= 0 { throw ValidationError("--peer-hwm must be positive") }
        if maxEventBytes <= 0 { throw ValidationError("--max-event-bytes must be positive") }
        if requestTimeoutMs <= 0 { throw ValidationError("--request-timeout-ms must be positive") }
        if let metrics {
            do { _ = try MetricsAddress(parsing: metrics) } catch { throw ValidationError(error.description) }
        }
        if let pipeline {
            do { _ = try Pipeline.parse(list: pipeline, pluginDirectory: nil) } catch { throw ValidationError(error.description) }
        }
    }

    /// The broker configuration these flags describe over `base` (defaults, or a config file's values).
    ///
    /// `--pipeline` here gives stage names only; `eventbus up` resolves plugins itself.
    func config(base: BrokerConfig = BrokerConfig()) throws -> BrokerConfig {
        var config = base
        if let commandEndpoint { config.commandEndpoint = commandEndpoint }
        if let streamEndpoint { config.streamEndpoint = streamEndpoint }
        if let dataDir { config.dataDirectory = dataDir }
        if let pipeline { config.pipeline = try Pipeline.parse(list: pipeline, pluginDirectory: nil).names }
        if let fsync { config.fsync = fsync }
        config.fsyncIntervalMilliseconds = fsyncIntervalMs
        if let segmentBytes { config.segmentBytes = segmentBytes }
        config.retentionBytes = retentionBytes
        config.retentionAge = retentionAge
        config.maxEventBytes = maxEventBytes
        config.requestTimeoutMilliseconds = requestTimeoutMs
        if let cacheMb { config.cacheBytes = cacheMb * 1024 * 1024 }
        if let streamHwm { config.streamHighWaterMark = streamHwm }
        if let peerHwm { config.peerHighWaterMark = peerHwm }
        if let security {
            do { config.security = try SecurityConfigFile.load(path: security) } catch { throw Output.fail(error.description) }
            config.securityFile = security
        }
        if allowInsecureBind { config.allowInsecureBind = true }
        if allowSharedDataDir { config.allowSharedDataDirectory = true }
        return config
    }

    /// Bootstraps swift-metrics with Prometheus and serves it when `--metrics` is given.
    func startMetrics(logger: Logger) throws -> MetricsServer? {
        guard let metrics else { return nil }
        do {
            let server = try MetricsServer(address: try MetricsAddress(parsing: metrics),
                                           registry: MetricsBootstrap.prometheus(), logger: logger)
            server.start()
            return server
        } catch {
            throw Output.fail(error, "cannot serve metrics")
        }
    }
}

extension FsyncPolicy: ExpressibleByArgument {}
