/// How a ``SegmentLog`` sizes its segments and what it retains.
public struct LogOptions: Sendable, Equatable {
    /// The size in bytes after which the log starts a new segment (default
    /// 64 MiB). A batch is never split: it goes whole into a new segment when
    /// it would push the active one past this size.
    public var segmentBytes: Int
    /// Remove the oldest segments while the log is larger than this many
    /// bytes; `nil` (the default) keeps everything.
    public var retentionBytes: UInt64?
    /// Remove segments whose newest record is older than this many seconds;
    /// `nil` (the default) keeps everything.
    public var retentionAge: Double?

    /// Creates options.
    ///
    /// - Parameters:
    ///   - segmentBytes: The segment size (default 64 MiB).
    ///   - retentionBytes: The size limit, or `nil` for none.
    ///   - retentionAge: The age limit in seconds, or `nil` for none.
    public init(segmentBytes: Int = 64 << 20, retentionBytes: UInt64? = nil, retentionAge: Double? = nil) {
        self.segmentBytes = segmentBytes
        self.retentionBytes = retentionBytes
        self.retentionAge = retentionAge
    }
}
