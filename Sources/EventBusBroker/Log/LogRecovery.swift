/// What opening a ``SegmentLog`` found and repaired.
public struct LogRecovery: Sendable, Equatable {
    /// The number of segments after recovery.
    public let segments: Int
    /// The number of records retained after recovery.
    public let records: UInt64
    /// Bytes cut off a torn or corrupt tail (including segments set aside), 0 when the log was clean.
    public let truncatedBytes: UInt64
    /// The file name of the segment that was truncated, if any.
    public let truncatedSegment: String?
    /// Why the valid log ended early, if it did.
    public let reason: String?

    /// Creates a recovery report.
    ///
    /// - Parameters:
    ///   - segments: Segments after recovery.
    ///   - records: Records retained.
    ///   - truncatedBytes: Bytes removed.
    ///   - truncatedSegment: The truncated segment's file name.
    ///   - reason: Why the log was truncated.
    public init(segments: Int, records: UInt64, truncatedBytes: UInt64, truncatedSegment: String?, reason: String?) {
        self.segments = segments
        self.records = records
        self.truncatedBytes = truncatedBytes
        self.truncatedSegment = truncatedSegment
        self.reason = reason
    }
}
