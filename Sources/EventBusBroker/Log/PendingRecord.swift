/// One event to append to the log.
///
/// The log stores the bytes as given; it neither parses nor validates them.
///
/// The event's `source` and `id` are usually bytes of the event itself, and are
/// then kept as ranges of it, not as slices: a slice holds a reference to the
/// event's storage, and every copy of a record (into the batch, the cache, the
/// stage index) would retain and release it twice more. Only when they differ
/// from the event's bytes (escapes decoded) or come from elsewhere (a record
/// read back from the log) are they kept in an array of their own.
public struct PendingRecord: Sendable, Equatable {
    /// The event's topic, `STAGE/SUBJECT/TYPE` (at most 65,535 bytes).
    public var topic: [UInt8]
    /// The whole event as it was published.
    public var event: [UInt8]
    /// `source` then `id`, when they are not bytes of ``event``; `nil` when the spans are ranges of ``event``.
    private let identity: [UInt8]?
    /// Where `source` lies: in ``event``, or in ``identity`` when there is one.
    private let sourceSpan: Range<Int32>
    /// Where `id` lies, as ``sourceSpan``.
    private let idSpan: Range<Int32>

    /// Creates a record to append.
    ///
    /// - Parameters:
    ///   - topic: The event's topic.
    ///   - source: The event's `source` (at most 65,535 bytes).
    ///   - id: The event's `id` (at most 65,535 bytes).
    ///   - event: The event's bytes.
    public init(topic: [UInt8], source: some Collection<UInt8>, id: some Collection<UInt8>, event: [UInt8]) {
        self.topic = topic
        self.event = event
        var identity = Array(source)
        identity.append(contentsOf: id)
        self.identity = identity
        sourceSpan = 0..<Int32(source.count)
        idSpan = Int32(source.count)..<Int32(identity.count)
    }

    /// Creates a record whose `source` and `id` are the bytes of `event` in these ranges, copying nothing.
    ///
    /// - Precondition: both ranges lie within `event`.
    init(topic: [UInt8], event: [UInt8], source: Range<Int>, id: Range<Int>) {
        precondition(source.upperBound <= event.count && id.upperBound <= event.count && event.count <= Int(Int32.max),
                     "the identity's ranges lie within the event")
        self.topic = topic
        self.event = event
        identity = nil
        sourceSpan = Int32(source.lowerBound)..<Int32(source.upperBound)
        idSpan = Int32(id.lowerBound)..<Int32(id.upperBound)
    }

    /// The event's `source`.
    public var source: ArraySlice<UInt8> { (identity ?? event)[Self.range(sourceSpan)] }
    /// The event's `id`.
    public var id: ArraySlice<UInt8> { (identity ?? event)[Self.range(idSpan)] }
    /// The length of `source` in bytes.
    var sourceCount: Int { sourceSpan.count }
    /// The length of `id` in bytes.
    var idCount: Int { idSpan.count }

    /// Where `source` and `id` lie in ``event``, when they are bytes of it.
    var spansInEvent: (source: Range<Int32>, id: Range<Int32>)? { identity == nil ? (sourceSpan, idSpan) : nil }

    /// Calls `body` with the bytes of `source` and of `id`, read where they lie.
    func withIdentity<Result>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Result) -> Result {
        func call(_ bytes: UnsafeRawBufferPointer) -> Result {
            body(UnsafeRawBufferPointer(rebasing: bytes[Self.range(sourceSpan)]),
                 UnsafeRawBufferPointer(rebasing: bytes[Self.range(idSpan)]))
        }
        if let identity { return identity.withUnsafeBytes(call) }
        return event.withUnsafeBytes(call)
    }

    private static func range(_ span: Range<Int32>) -> Range<Int> { Int(span.lowerBound)..<Int(span.upperBound) }

    /// Equal when the topic, `source`, `id` and event are, however `source` and `id` are held.
    public static func == (lhs: PendingRecord, rhs: PendingRecord) -> Bool {
        lhs.topic == rhs.topic && lhs.event == rhs.event && lhs.source.elementsEqual(rhs.source)
            && lhs.id.elementsEqual(rhs.id)
    }
}
