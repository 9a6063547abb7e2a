/// One event to append to the log.
///
/// The log stores the bytes as given; it neither parses nor validates them.
public struct PendingRecord: Sendable, Equatable {
    /// The event's topic, `STAGE/SUBJECT/TYPE` (at most 65,535 bytes).
    public var topic: [UInt8]
    /// The event's `source` attribute (at most 65,535 bytes); often a slice of ``event``'s frame.
    public var source: ArraySlice<UInt8>
    /// The event's `id` attribute (at most 65,535 bytes); often a slice of ``event``'s frame.
    public var id: ArraySlice<UInt8>
    /// The whole event as it was published.
    public var event: [UInt8]

    /// Creates a record to append.
    ///
    /// - Parameters:
    ///   - topic: The event's topic.
    ///   - source: The event's `source`.
    ///   - id: The event's `id`.
    ///   - event: The event's bytes.
    public init(topic: [UInt8], source: [UInt8], id: [UInt8], event: [UInt8]) {
        self.init(topic: topic, source: source[...], id: id[...], event: event)
    }

    /// Creates a record to append from slices (of the frame the event came in, say), copying nothing.
    public init(topic: [UInt8], source: ArraySlice<UInt8>, id: ArraySlice<UInt8>, event: [UInt8]) {
        self.topic = topic
        self.source = source
        self.id = id
        self.event = event
    }
}
