/// The CloudEvents 1.0 attributes of an event that the bus reads.
///
/// Other attributes (`datacontenttype`, `traceparent`, …) stay in the event's
/// bytes, which the broker stores and forwards as they came; it never
/// re-encodes an event.
public struct EventEnvelope: Sendable, Equatable {
    /// `id`: 1–128 printable ASCII characters; unique per `source`.
    public var id: String
    /// `source`: 1–256 characters, for example `/chat-api`.
    public var source: String
    /// `type`: the wire name, `[a-z][a-z0-9_.]{0,63}`.
    public var type: String
    /// `subject`: a cid, `@` and a user id, or a channel type name; never contains `/`.
    public var subject: String
    /// `time`, if present.
    public var time: String?
    /// `replyto`, the extension attribute of `query` events, if present.
    public var replyto: String?
    /// `data`, if present: always an object.
    public var data: JSONValue?

    /// Creates an envelope.
    public init(
        id: String, source: String, type: String, subject: String,
        time: String? = nil, replyto: String? = nil, data: JSONValue? = nil
    ) {
        self.id = id
        self.source = source
        self.type = type
        self.subject = subject
        self.time = time
        self.replyto = replyto
        self.data = data
    }

    /// The catalogue's entry for ``type``, if it is a known type.
    public var eventType: EventType? { EventType(rawValue: type) }

    /// The event's topic at `stage`: `STAGE/SUBJECT/TYPE`.
    public func topic(stage: String) -> [UInt8] {
        Topic.make(stage: stage, subject: subject, type: type)
    }
}
