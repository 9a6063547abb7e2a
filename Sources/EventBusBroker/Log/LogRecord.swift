/// One record stored in the log.
public struct LogRecord: Sendable, Equatable {
    /// The record's sequence number; the first record ever appended has SEQ 1.
    public let seq: UInt64
    /// The append time, in milliseconds since 1970-01-01 UTC.
    public let timestamp: UInt64
    /// The event's topic.
    public let topic: [UInt8]
    /// The event's `source`.
    public let source: [UInt8]
    /// The event's `id`.
    public let id: [UInt8]
    /// The event's bytes.
    public let event: [UInt8]

    /// Creates a record.
    ///
    /// - Parameters:
    ///   - seq: The sequence number.
    ///   - timestamp: The append time in milliseconds since 1970.
    ///   - topic: The topic.
    ///   - source: The `source`.
    ///   - id: The `id`.
    ///   - event: The event bytes.
    public init(seq: UInt64, timestamp: UInt64, topic: [UInt8], source: [UInt8], id: [UInt8], event: [UInt8]) {
        self.seq = seq
        self.timestamp = timestamp
        self.topic = topic
        self.source = source
        self.id = id
        self.event = event
    }
}
