/// The envelope attributes of an event that passed
/// ``EventValidator/scanEnvelope(_:)-(UnsafeRawBufferPointer)``: strings only, `data` left unparsed.
///
/// What the broker needs to append an event at a stage other than `in`; use
/// ``EventEnvelope`` (from ``EventValidator/validate(_:stage:)-(UnsafeRawBufferPointer,_)``)
/// to read `data`.
package struct EnvelopeFields: Sendable, Equatable {
    /// `id`: 1–128 printable ASCII characters.
    package var id: String
    /// `source`: 1–256 characters.
    package var source: String
    /// `type`: `[a-z][a-z0-9_.]{0,63}`.
    package var type: String
    /// `subject`: 1–256 bytes, no `/`.
    package var subject: String
    /// `time`, if present (not checked beyond being a string, as at every stage but `in`).
    package var time: String?
    /// `replyto`, if present.
    package var replyto: String?
    /// Whether the event has a `data` member (always an object).
    package var hasData: Bool
    /// Where `data` lies in the scanned frame, when it is present and the scan found it.
    package var dataRange: Range<Int>?

    /// Creates the fields.
    package init(
        id: String, source: String, type: String, subject: String, time: String? = nil,
        replyto: String? = nil, hasData: Bool = false, dataRange: Range<Int>? = nil
    ) {
        self.id = id
        self.source = source
        self.type = type
        self.subject = subject
        self.time = time
        self.replyto = replyto
        self.hasData = hasData
        self.dataRange = dataRange
    }

    /// The attributes of an envelope.
    package init(_ envelope: EventEnvelope) {
        self.init(
            id: envelope.id, source: envelope.source, type: envelope.type, subject: envelope.subject,
            time: envelope.time, replyto: envelope.replyto, hasData: envelope.data != nil)
    }
}
