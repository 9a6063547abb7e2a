import EventBus

/// Everything a broker is configured with.
public struct BrokerConfig: Sendable {
    /// The command socket's endpoint (ROUTER).
    public var commandEndpoint = WireProtocol.defaultCommandEndpoint
    /// The stream socket's endpoint (XPUB).
    public var streamEndpoint = WireProtocol.defaultStreamEndpoint
    /// Where the log and consumer offsets live.
    public var dataDirectory = ".eventbus"
    /// The plugin stages between `in` and `out`, in order.
    public var pipeline: [String] = []
    /// Services a REQ may name before any plugin declared them in HELLO.
    public var services: [String] = ["receipts"]
    /// When appends are forced to disk.
    public var fsync = FsyncPolicy.always
    /// The longest wait between fsyncs with `.periodic`.
    public var fsyncIntervalMilliseconds = 100
    /// The largest event accepted, in bytes.
    public var maxEventBytes = WireProtocol.defaultMaxEventBytes
    /// The size at which a log segment is closed and a new one started.
    public var segmentBytes = 64 * 1024 * 1024
    /// Remove the oldest segments while the log is larger than this.
    public var retentionBytes: UInt64?
    /// Remove segments whose newest event is older than this many seconds.
    public var retentionAge: Double?
    /// How long a REQ waits for its reply.
    public var requestTimeoutMilliseconds = 5_000
    /// How long an event identity is remembered for deduplication.
    public var dedupWindowSeconds: Double = 600
    /// Identities remembered whatever their age.
    public var dedupMinimumIDs = 1_000_000
    /// Identities remembered at most (bounds memory, ~70 bytes each).
    public var dedupMaximumIDs = 4_000_000
    /// Messages queued per stream subscriber before the newest are dropped.
    public var streamHighWaterMark: Int32 = 100_000
    /// Messages queued to one command peer that does not read them before the next replies are
    /// dropped (counted as `dropped_replies`; deliveries wait instead), and messages queued from one
    /// peer before the broker stops reading its connection.
    public var peerHighWaterMark: Int32 = 100_000
    /// The largest frame the command socket takes; a peer that sends a larger one is disconnected
    /// (twice the 4 MiB batch limit, so that a frame over the limit still gets `too_large`).
    public var maxFrameBytes: Int64 = 8 * 1024 * 1024
    /// Memory for the newest events, served to consumers without a log read.
    public var cacheBytes = 256 * 1024 * 1024

    /// CURVE keys and client roles; `nil` runs without authentication (loopback/ipc binds only).
    public var security: SecurityConfig?
    /// The file ``security`` was read from, for the processes `eventbus up` starts that read it
    /// too (eventbus-http takes its `http_tokens`, docs/http.md).
    public var securityFile: String?
    /// Bind non-loopback TCP without keys (`--allow-insecure-bind`): anyone who reaches it may do anything.
    public var allowInsecureBind = false
    /// Use a data directory that group or others may read, write or enter (`--allow-shared-data-dir`):
    /// without it the broker refuses one, since the log holds every event unfiltered.
    public var allowSharedDataDirectory = false
    /// The file mode given to ipc socket files after binding.
    public var ipcFileMode: UInt32 = 0o600

    /// A configuration with every default.
    public init() {}

    /// Every stage events may be published to: `in`, the pipeline, `out`, `diag`.
    public var stages: [String] { ["in"] + pipeline + ["out", "diag"] }
}
