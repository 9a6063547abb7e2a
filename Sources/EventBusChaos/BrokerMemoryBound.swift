/// What `eventbus up` may hold at most in a round, by docs/operations.md ("Memory"): what it
/// held when it became ready (code, libzmq, the dedup table sized at start), plus
/// - the cache: at most the bytes logged since (each record with its allocation), and at
///   most `--cache-mb`;
/// - the index: 16 bytes per record (its SEQ in its stage, its segment offset);
/// - the dedup window: 70 bytes per identity, one per record;
/// - the peer that never reads (the hostile peer): at most `--peer-hwm` replies queued to it,
///   each a few frames of at most a small message's size.
///
/// A round whose `eventbus up` peaked above it breaks the bound the operator sizes for.
public struct BrokerMemoryBound: Sendable, Equatable {
    /// Bytes of a record's allocation beside its bytes in the cache.
    public static let cacheOverheadPerRecord = 64
    public static let indexBytesPerRecord = 16
    public static let dedupBytesPerIdentity = 70
    /// A queued reply: at most five frames of 64 bytes (libzmq keeps up to 33 bytes inline).
    public static let bytesPerQueuedReply = 5 * 64

    /// Resident bytes when the last run became ready.
    public var readyBytes: Int
    /// Bytes and records in the log.
    public var loggedBytes: Int
    public var records: Int
    /// `--cache-mb` in bytes.
    public var cacheBytes = 256 * 1_048_576
    /// `--peer-hwm`, for the one peer that never reads.
    public var peerHighWaterMark = 100_000

    public init(readyBytes: Int, loggedBytes: Int, records: Int) {
        self.readyBytes = readyBytes
        self.loggedBytes = loggedBytes
        self.records = records
    }

    /// The bound, in bytes.
    public var bytes: Int {
        readyBytes
            + min(cacheBytes, loggedBytes + records * Self.cacheOverheadPerRecord)
            + records * (Self.indexBytesPerRecord + Self.dedupBytesPerIdentity)
            + peerHighWaterMark * Self.bytesPerQueuedReply
    }

    /// The violation, if `peakBytes` is over the bound.
    public func check(peakBytes: Int) -> Violation? {
        peakBytes > bytes ? .memoryOverBound(peakBytes: peakBytes, bound: self) : nil
    }
}
