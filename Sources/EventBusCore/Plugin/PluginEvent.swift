
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

    /// The event type, read from the topic without parsing the event: what follows its last `/`.
    public var type: Substring {
        // On the contiguous bytes (`withUTF8` makes them so, at no cost for a native string):
        // the view's own lastIndex(of:) walks back index by index, about 1 % of a reducer's time.
        var topic = topic
        guard let offset = topic.withUTF8({ $0.lastIndex(of: UInt8(ascii: "/")) }) else { return "" }
        return topic[topic.utf8.index(topic.utf8.startIndex, offsetBy: offset + 1)...]
    }

    /// Whether the event was logged at stage `in` (its topic starts `in/`), where the broker applies
    /// every ingress rule before it logs an event.
    var isLoggedAtIn: Bool {
        var topic = topic
        return topic.withUTF8 { $0.count > Self.inPrefix.count && $0.starts(with: Self.inPrefix) }
    }

    /// How a topic of stage `in` starts.
    private static let inPrefix = Array((Stage.in + "/").utf8)

    /// The subject, read from the topic without parsing the event: what lies between its
    /// first and second `/`.
    public var subject: Substring {
        let utf8 = topic.utf8
        guard let first = utf8.firstIndex(of: UInt8(ascii: "/")),
              let second = utf8[utf8.index(after: first)...].firstIndex(of: UInt8(ascii: "/")) else { return "" }
        return topic[utf8.index(after: first)..<second]
    }

    /// Parses the envelope (about 1 µs for a typical event).
    public func envelope() throws(EventValidationError) -> EventEnvelope {
        try EventValidator.validate(bytes, stage: PluginEvent.anyStage).envelope
    }

    /// The envelope and the string members of `data` named in `keys`, by scans: no `JSONValue` tree.
    ///
    /// A member that is absent or not a string comes back `nil` (as `data["key"]?.stringValue` would);
    /// escapes are decoded.
    ///
    /// - Parameter keys: The members of `data` to read; make the set once (a `static let`).
    package func dataStrings(_ keys: JSONScanner.Keys) throws(EventValidationError) -> (envelope: EnvelopeFields, strings: [String?]) {
        try bytes.withUnsafeBytes { frame in
            Result { () throws(EventValidationError) -> (envelope: EnvelopeFields, strings: [String?]) in
                let envelope = try EventValidator.scanEnvelope(frame)
                guard let range = envelope.dataRange else { return (envelope, keys.names.map { _ in nil }) }
                let data = UnsafeRawBufferPointer(rebasing: frame[range])
                // The envelope scan validated all of `data`: this scan cannot fail.
                guard let members = try? JSONScanner.scan(data, members: keys) else {
                    return (envelope, keys.names.map { _ in nil })
                }
                let strings = keys.names.indices.map { position -> String? in
                    guard let span = members[position], span.kind == .string else { return nil }
                    return JSONScanner.string(span, in: data)
                }
                return (envelope, strings)
            }
        }.get()
    }

    /// The string members of `data` named in `keys`, by one scan that checks the JSON but not the
    /// envelope's rules again, which the broker applied when it logged the event: what a filter
    /// that judges events by a few members of `data` reads. Use ``dataStrings(_:)`` when the
    /// envelope is needed too.
    ///
    /// A member that is absent or not a string comes back `nil`; escapes are decoded.
    ///
    /// - Parameter keys: The members of `data` to read; make the set once (a `static let`).
    package func loggedDataStrings(_ keys: JSONScanner.Keys) throws(EventValidationError) -> [String?] {
        try EventValidator.dataStrings(bytes, keys)
    }

    /// Parses and validates the event as an ingress event and returns its typed payload,
    /// or `nil` for a type outside the ingress types of docs/events.md (`query`, `reply`, plugin types).
    public func ingress() throws(EventValidationError) -> (envelope: EventEnvelope, payload: IngressPayload)? {
        guard let known = Self.ingressType(type) else { return nil }
        let validated = try EventValidator.validate(bytes, stage: Stage.in)
        guard let payload = validated.payload else { return nil }
        return (validated.envelope, payload)
    }

    /// The typed payload of an ingress event and its envelope's type and time, without the `data` tree:
    /// read by scans for the receipt and membership types (several times faster), by the full parse for
    /// the others. `nil` for a type outside docs/events.md's ingress types. Use ``ingress()`` when the
    /// original `data` is needed (to re-emit it).
    ///
    /// An event of stage `in` passed every ingress rule before the broker logged it, so for one of those
    /// types its members are only read, not judged again.
    public func ingressPayload() throws(EventValidationError) -> (type: EventType, time: String?, payload: IngressPayload)? {
        try ingressPayload(type: type)
    }

    /// ``ingressPayload()`` for a caller that has read ``type`` already (a plugin that dispatched on it).
    package func ingressPayload(
        type: Substring
    ) throws(EventValidationError) -> (type: EventType, time: String?, payload: IngressPayload)? {
        guard let known = Self.ingressType(type) else { return nil }
        if isLoggedAtIn, let logged = bytes.withUnsafeBytes({ EventValidator.loggedIngress($0, type: known) }) {
            return (known, logged.time, logged.payload)
        }
        if let scanned = bytes.withUnsafeBytes({ EventValidator.scannedIngress($0) }) {
            return (known, scanned.envelope.time, scanned.payload)
        }
        guard let (envelope, payload) = try ingress() else { return nil }
        return (known, envelope.time, payload)
    }

    /// The ingress type named `type` (read from the topic), found from its bytes: `nil` for any
    /// other type.
    private static func ingressType(_ type: Substring) -> EventType? {
        guard let known = knownType(type), known.isIngress else { return nil }
        return known
    }

    /// The event's type when docs/events.md names it (at any stage: ingress, the reducer's
    /// outputs, `query`, `reply`, `receipt.*`), found from the topic's bytes; `nil` for any
    /// other type (a plugin's own). A switch on it costs one lookup, where a switch on
    /// ``type`` compares the type with each case's string in turn.
    public var knownType: EventType? { Self.knownType(type) }

    private static func knownType(_ type: Substring) -> EventType? {
        var type = type
        return type.withUTF8(EventType.named)
    }

    /// A stage name that gets the envelope checks only.
    static let anyStage = "plugin"
}
