import ArgumentParser
import EventBus
import EventBusBroker
import Logging

/// The flags of the commands that run a broker (`broker` and `up`).
struct BrokerOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Where the log and consumer offsets live.", valueName: "DIR"))
    var dataDir: String = ".eventbus"

    @Option(name: .customLong("command"), help: ArgumentHelp("The command endpoint to bind (ROUTER).", valueName: "EP"))
    var commandEndpoint: String = WireProtocol.defaultCommandEndpoint

    @Option(name: .customLong("stream"), help: ArgumentHelp("The stream endpoint to bind (XPUB).", valueName: "EP"))
    var streamEndpoint: String = WireProtocol.defaultStreamEndpoint

    @Option(help: ArgumentHelp(
        "Plugin stages between in and out, comma-separated; external:NAME for a plugin that connects by itself.",
        valueName: "a,b,c"))
    var pipeline: String?

    @Option(help: "When to fsync the log: always, periodic or off.")
    var fsync: FsyncPolicy = .always

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

    @Option(help: "Log level on stderr (trace, debug, info, notice, warning, error, critical).")
    var logLevel: Logger.Level = .info

    func validate() throws {
        if fsyncIntervalMs <= 0 { throw ValidationError("--fsync-interval-ms must be positive") }
        if let segmentBytes, segmentBytes <= 0 { throw ValidationError("--segment-bytes must be positive") }
        if let retentionAge, retentionAge <= 0 { throw ValidationError("--retention-age must be positive") }
        if maxEventBytes <= 0 { throw ValidationError("--max-event-bytes must be positive") }
        if requestTimeoutMs <= 0 { throw ValidationError("--request-timeout-ms must be positive") }
        if let pipeline { _ = try Self.stages(pipeline) }
    }

    /// The stage names of a `--pipeline` value: `external:` stripped, in order.
    static func stages(_ pipeline: String) throws -> [String] {
        let entries = pipeline.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        if entries == [""] { return [] }
        return try entries.map { entry in
            let name = entry.hasPrefix("external:") ? String(entry.dropFirst("external:".count)) : entry
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || "-_.".contains($0)) }) else {
                throw ValidationError("--pipeline entry '\(entry)' is not a stage name ([a-z0-9_.-], or external:NAME)")
            }
            guard name != "in", name != "out", name != "diag" else {
                throw ValidationError("--pipeline entry '\(entry)': in, out and diag are not plugin stages")
            }
            return name
        }
    }

    /// The broker configuration these flags describe, with `defaultPipeline` when `--pipeline` is absent.
    func config(defaultPipeline: String) throws -> BrokerConfig {
        var config = BrokerConfig()
        config.commandEndpoint = commandEndpoint
        config.streamEndpoint = streamEndpoint
        config.dataDirectory = dataDir
        config.pipeline = try Self.stages(pipeline ?? defaultPipeline)
        config.fsync = fsync
        config.fsyncIntervalMilliseconds = fsyncIntervalMs
        if let segmentBytes { config.segmentBytes = segmentBytes }
        config.retentionBytes = retentionBytes
        config.retentionAge = retentionAge
        config.maxEventBytes = maxEventBytes
        config.requestTimeoutMilliseconds = requestTimeoutMs
        return config
    }
}

extension FsyncPolicy: ExpressibleByArgument {}
