/// Where the envelope attributes of a valid event lie in its frame, for a
/// reader that routes and deduplicates events without making strings of them
/// (the broker).
///
/// Produced by ``EventValidator/envelopeSpans(_:stage:)`` only for events it
/// can vouch for, whose attributes are plain JSON strings (no escapes), so
/// that the bytes in each range are the attribute's text.
package struct EnvelopeSpans: Sendable, Equatable {
    /// The bytes of `id`, between its quotes.
    package var id: Range<Int>
    /// The bytes of `source`, between its quotes.
    package var source: Range<Int>
    /// The bytes of `type`, between its quotes.
    package var type: Range<Int>
    /// The bytes of `subject`, between its quotes.
    package var subject: Range<Int>
    /// Whether the event has a `time` attribute.
    package var hasTime: Bool
    /// Where `data` lies, when present.
    package var dataRange: Range<Int>?

    /// Creates spans.
    package init(id: Range<Int>, source: Range<Int>, type: Range<Int>, subject: Range<Int>, hasTime: Bool,
                dataRange: Range<Int>?) {
        self.id = id
        self.source = source
        self.type = type
        self.subject = subject
        self.hasTime = hasTime
        self.dataRange = dataRange
    }
}
