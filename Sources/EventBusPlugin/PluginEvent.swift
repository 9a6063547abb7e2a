import EventBus

/// One event of the plugin's input stage, exactly as the broker logged it.
public struct PluginEvent: Sendable {
    /// Its SEQ in the log.
    public let seq: UInt64
    /// Its topic, `STAGE/SUBJECT/TYPE`.
    public let topic: String
    /// The CloudEvents JSON, byte for byte.
    public let bytes: [UInt8]

    /// Creates an event (the runtime does; tests may too).
    public init(seq: UInt64, topic: String, bytes: [UInt8]) {
        self.seq = seq
        self.topic = topic
        self.bytes = bytes
    }

    /// The event type, read from the topic without parsing the event.
    public var type: Substring {
        guard let slash = topic.lastIndex(of: "/") else { return "" }
        return topic[topic.index(after: slash)...]
    }

    /// The subject, read from the topic without parsing the event.
    public var subject: Substring {
        let parts = topic.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        return parts.count == 3 ? parts[1] : ""
    }

    /// Parses the envelope (about 1 µs for a typical event).
    public func envelope() throws(EventValidationError) -> EventEnvelope {
        try EventValidator.validate(bytes, stage: PluginEvent.anyStage).envelope
    }

    /// Parses and validates the event as an ingress event and returns its typed payload,
    /// or `nil` for a type outside SPEC.md's ingress catalogue (`query`, `reply`, plugin types).
    public func ingress() throws(EventValidationError) -> (envelope: EventEnvelope, payload: IngressPayload)? {
        guard let known = EventType(rawValue: String(type)), known.isIngress else { return nil }
        let validated = try EventValidator.validate(bytes, stage: Stage.in)
        guard let payload = validated.payload else { return nil }
        return (validated.envelope, payload)
    }

    /// A stage name that gets the envelope checks only.
    static let anyStage = "plugin"
}
