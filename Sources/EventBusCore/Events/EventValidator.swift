/// Validates event frames at the broker's door (docs/protocol.md, "Events"; docs/events.md, "Ingress events").
///
/// At every stage the frame must be UTF-8 JSON (`bad_json`) holding an object
/// with a valid CloudEvents envelope (`bad_event`). At stage `in` the type
/// must also be an ingress type (`unknown_type`) and `data` must satisfy the
/// type's table, with identifiers, times and the subject checked
/// (`bad_event`); the result then carries the typed ``IngressPayload``.
///
/// Every message starts with the path of the field at fault, for example
/// `data.members[3]: must match [A-Za-z0-9_!.@-]{1,128}`.
public enum EventValidator {
    /// The only accepted `specversion`.
    public static let specVersion = "1.0"
    /// The longest `id`, in bytes (all printable ASCII).
    public static let maxIDLength = 128
    /// Sources under this prefix are the bus's own: a plugin's outputs carry `/eventbus/NAME`.
    /// Stage `in` refuses them, so that nothing published there can take a dedup identity
    /// (stage, source, id) that a plugin will give a later output (docs/protocol.md).
    public static let reservedSourcePrefix = "/eventbus/"

    /// Whether `source` is `/eventbus` or lies under `/eventbus/`.
    public static func isReservedSource(_ source: String) -> Bool {
        source == "/eventbus" || source.hasPrefix(reservedSourcePrefix)
    }

    /// Whether the bytes of a `source` are `/eventbus` or lie under `/eventbus/`.
    static func isReservedSource(_ source: UnsafeBufferPointer<UInt8>) -> Bool {
        ByteRun.equal(source, reservedSourceBytes) || ByteRun.starts(source, with: reservedSourcePrefixBytes)
    }

    /// ``reservedSourcePrefix`` as bytes, and without its closing `/` (the bus's own source).
    private static let reservedSourcePrefixBytes = Array(reservedSourcePrefix.utf8)
    private static let reservedSourceBytes = Array(reservedSourcePrefixBytes.dropLast())
    /// ``specVersion`` as bytes.
    static let specVersionBytes = Array(specVersion.utf8)

    /// The longest `source`, in Unicode scalars.
    public static let maxSourceLength = 256
    /// The longest `subject`, in bytes.
    public static let maxSubjectBytes = 256

    /// Validates one event frame published to `stage`.
    ///
    /// - Parameters:
    ///   - frame: the event's bytes, as received.
    ///   - stage: the stage it is published to; `in` adds the ingress rules.
    /// - Returns: the envelope, and the typed payload at stage `in`.
    /// - Throws: ``EventValidationError`` with `.badJSON`, `.badEvent` or `.unknownType`.
    public static func validate(_ frame: UnsafeRawBufferPointer, stage: String) throws(EventValidationError)
        -> ValidatedEvent
    {
        guard stage != Stage.in else { return try validate(parsing: frame, stage: stage) }
        // The envelope from a scan; only `data`, if present, is parsed.
        let fields = try scanEnvelope(frame)
        var data: JSONValue?
        if fields.hasData {
            // The scan accepted the whole text, so its `data` object parses; should it not, the full path decides.
            guard let range = fields.dataRange,
                let parsed = try? JSONParser.parse(UnsafeRawBufferPointer(rebasing: frame[range]))
            else {
                return try validate(parsing: frame, stage: stage)
            }
            data = parsed
        }
        return ValidatedEvent(
            envelope: EventEnvelope(
                id: fields.id, source: fields.source, type: fields.type, subject: fields.subject,
                time: fields.time, replyto: fields.replyto, data: data))
    }

    /// Checks an event frame's JSON and its envelope, the checks of every stage but `in`, without
    /// parsing `data` (it must only be an object).
    ///
    /// The same checks, in the same order, with the same errors as
    /// ``validate(_:stage:)-(UnsafeRawBufferPointer,_)`` at a stage other than `in`, but several
    /// times faster: one pass over the bytes that builds only the envelope's strings.
    ///
    /// - Parameter frame: the event's bytes, as received.
    /// - Returns: the envelope's attributes and where `data` lies in `frame`.
    /// - Throws: ``EventValidationError`` with `.badJSON` or `.badEvent`.
    package static func scanEnvelope(_ frame: UnsafeRawBufferPointer) throws(EventValidationError) -> EnvelopeFields {
        let members: JSONScanner.Members
        do {
            members = try JSONScanner.scan(frame, members: envelopeKeys)
        } catch {
            return try envelopeFields(parsing: frame)
        }
        return try envelopeFields(frame, members)
    }

    /// ``scanEnvelope(_:)-(UnsafeRawBufferPointer)`` and, in the same pass, the members of `data`
    /// that the ingress fast path reads (``IngressShape/dataKeys``); the second is empty (its root
    /// `.null`) when `data` is absent, not an object, or the scan failed and the parser decided.
    static func scanEnvelopeAndData(_ frame: UnsafeRawBufferPointer) throws(EventValidationError)
        -> (envelope: EnvelopeFields, data: JSONScanner.Members)
    {
        var members = JSONScanner.Members(root: .null), data = JSONScanner.Members(root: .null)
        do {
            try JSONScanner.scan(frame, members: envelopeKeys, into: &members, nested: IngressShape.dataKeys, of: dataPosition,
                                 into: &data)
        } catch {
            return (try envelopeFields(parsing: frame), JSONScanner.Members(root: .null))
        }
        return (try envelopeFields(frame, members), data)
    }

    /// The string members named in `keys` of an event's `data`, by one scan that checks that the
    /// whole text is JSON and nothing of the envelope's rules: for an event the broker logged,
    /// whose envelope it checked. A member that is absent or not a string (or a `data` that is
    /// absent or not an object) comes back `nil`; escapes are decoded.
    ///
    /// - Throws: ``EventValidationError`` with `.badJSON` when the text is not JSON.
    package static func dataStrings(_ frame: UnsafeRawBufferPointer, _ keys: JSONScanner.Keys) throws(EventValidationError)
        -> [String?]
    {
        var members = JSONScanner.Members(root: .null), data = JSONScanner.Members(root: .null)
        do {
            try JSONScanner.scan(frame, members: dataOnlyKeys, into: &members, nested: keys, of: 0, into: &data)
        } catch {
            throw badJSON(error)
        }
        return keys.names.indices.map { position in
            guard let span = data[position], span.kind == .string else { return nil }
            return JSONScanner.string(span, in: frame)
        }
    }

    /// ``dataStrings(_:_:)-(UnsafeRawBufferPointer,_)`` of an event held in an array.
    package static func dataStrings(_ frame: [UInt8], _ keys: JSONScanner.Keys) throws(EventValidationError) -> [String?] {
        try withBytes(of: frame) { (buffer) throws(EventValidationError) in try dataStrings(buffer, keys) }
    }

    /// `data` alone, the member ``dataStrings(_:_:)`` looks into.
    private static let dataOnlyKeys = JSONScanner.Keys(["data"])

    /// The envelope of a frame the scanner refused: the parser decides and words the error.
    private static func envelopeFields(parsing frame: UnsafeRawBufferPointer) throws(EventValidationError) -> EnvelopeFields {
        // Rare: let the parser decide and word the error, exactly as it always has.
        let root: JSONValue
        do {
            root = try JSONParser.parse(frame)
        } catch {
            throw badJSON(error)
        }
        return try envelopeFields(of: root)
    }

    /// The envelope's checks on the members a scan found.
    private static func envelopeFields(_ frame: UnsafeRawBufferPointer, _ members: JSONScanner.Members)
        throws(EventValidationError) -> EnvelopeFields
    {
        guard members.root == .object else { throw bad("event: must be a JSON object") }
        func field(_ position: Int) -> Field {
            guard let span = members[position] else { return .absent }
            guard span.kind == .string else { return .other }
            return .string(JSONScanner.string(span, in: frame))
        }
        var fields = try checkEnvelope(
            specversion: field(0), id: field(1), source: field(2), type: field(3), subject: field(4),
            time: field(5), replyto: field(6), data: members[7].map { $0.kind == .object ? .object : .other })
        fields.dataRange = members[7]?.range
        return fields
    }

    /// Checks an event frame held in an array; see the `UnsafeRawBufferPointer` overload.
    package static func scanEnvelope(_ frame: [UInt8]) throws(EventValidationError) -> EnvelopeFields {
        try withBytes(of: frame, scanEnvelope)
    }

    /// `check` over the bytes of `frame`, its typed error carried out of `withUnsafeBytes`.
    static func withBytes<T>(
        of frame: [UInt8], _ check: (UnsafeRawBufferPointer) throws(EventValidationError) -> T
    ) throws(EventValidationError) -> T {
        try frame.withUnsafeBytes { buffer in Result { () throws(EventValidationError) -> T in try check(buffer) } }.get()
    }

    /// The envelope's members, in the order ``scanEnvelope(_:)-(UnsafeRawBufferPointer)`` reads them.
    static let envelopeKeys = JSONScanner.Keys(
        ["specversion", "id", "source", "type", "subject", "time", "replyto", "data"])
    /// The position of `time` in ``envelopeKeys``.
    static let timePosition = 5
    /// The position of `data` in ``envelopeKeys``.
    static let dataPosition = 7

    /// The full path: parse to a ``JSONValue``, then validate that.
    static func validate(parsing frame: UnsafeRawBufferPointer, stage: String) throws(EventValidationError)
        -> ValidatedEvent
    {
        let root: JSONValue
        do {
            root = try JSONParser.parse(frame)
        } catch {
            throw badJSON(error)
        }
        return try validate(root, stage: stage)
    }

    static func badJSON(_ error: JSONError) -> EventValidationError {
        EventValidationError(code: .badJSON, message: "event: not valid JSON at byte \(error.offset): \(error.message)")
    }

    /// Validates one event frame held in an array; see the `UnsafeRawBufferPointer` overload.
    public static func validate(_ frame: [UInt8], stage: String) throws(EventValidationError) -> ValidatedEvent {
        try withBytes(of: frame) { buffer throws(EventValidationError) in try validate(buffer, stage: stage) }
    }

    /// Validates an event already parsed to a ``JSONValue``.
    public static func validate(_ event: JSONValue, stage: String) throws(EventValidationError) -> ValidatedEvent {
        let fields = try envelopeFields(of: event)
        let data = event["data"]
        let typeText = fields.type, subjectText = fields.subject, timeText = fields.time
        let envelope = EventEnvelope(
            id: fields.id, source: fields.source, type: typeText, subject: subjectText,
            time: timeText, replyto: fields.replyto, data: data)

        guard stage == Stage.in else {
            return ValidatedEvent(envelope: envelope)
        }
        guard let eventType = EventType(rawValue: typeText), eventType.isIngress else {
            throw EventValidationError(code: .unknownType, message: "type: \"\(typeText)\" is not an ingress type")
        }
        guard !isReservedSource(fields.source) else {
            throw bad("source: \"\(fields.source)\" is reserved: sources under \(reservedSourcePrefix) are the bus's own "
                + "(its plugins' outputs) and are refused at stage in")
        }
        if let timeText, !Identifier.isValidTimestamp(timeText) {
            throw bad("time: \(timestampRule)")
        }
        guard let data else { throw bad("data: required") }
        let payload = try ingressPayload(eventType, data: data)
        try checkSubject(subjectText, of: payload)
        return ValidatedEvent(envelope: envelope, payload: payload)
    }

    // MARK: - Envelope rules

    /// A member as the envelope rules see it.
    enum Field {
        case absent
        case string(String)
        /// Present, but neither a string nor, for `data`, an object.
        case other
        /// An object (only `data` needs to know).
        case object

        init(_ value: JSONValue?) {
            switch value {
            case nil: self = .absent
            case .string(let text)?: self = .string(text)
            case .object?: self = .object
            default: self = .other
            }
        }
    }

    /// The envelope rules on a parsed event.
    static func envelopeFields(of event: JSONValue) throws(EventValidationError) -> EnvelopeFields {
        guard case .object(let members) = event else {
            throw bad("event: must be a JSON object")
        }
        var specversion: JSONValue?
        var id: JSONValue?
        var source: JSONValue?
        var type: JSONValue?
        var subject: JSONValue?
        var time: JSONValue?
        var replyto: JSONValue?
        var data: JSONValue?
        for member in members {
            switch member.key {
            case "specversion": specversion = member.value
            case "id": id = member.value
            case "source": source = member.value
            case "type": type = member.value
            case "subject": subject = member.value
            case "time": time = member.value
            case "replyto": replyto = member.value
            case "data": data = member.value
            default: continue
            }
        }
        return try checkEnvelope(
            specversion: Field(specversion), id: Field(id), source: Field(source), type: Field(type),
            subject: Field(subject), time: Field(time), replyto: Field(replyto), data: data.map { Field($0) })
    }

    /// The envelope rules, in their order, whichever way the members were found.
    static func checkEnvelope(
        specversion: Field, id: Field, source: Field, type: Field, subject: Field, time: Field, replyto: Field,
        data: Field?
    ) throws(EventValidationError) -> EnvelopeFields {
        guard try requiredString(specversion, "specversion") == specVersion else {
            throw bad("specversion: must be \"1.0\"")
        }
        let idText = try requiredString(id, "id")
        guard isPrintableASCII(idText, max: maxIDLength) else {
            throw bad("id: must be 1-128 printable ASCII characters")
        }
        let sourceText = try requiredString(source, "source")
        guard hasScalarCount(sourceText, in: 1...maxSourceLength) else {
            throw bad("source: must be 1-256 characters")
        }
        let typeText = try requiredString(type, "type")
        guard Identifier.isValidEventTypeName(typeText) else {
            throw bad("type: must match [a-z][a-z0-9_.]{0,63}")
        }
        let subjectText = try requiredString(subject, "subject")
        guard isValidSubject(subjectText) else {
            throw bad("subject: must be 1-256 bytes with no '/'")
        }
        let timeText = try optionalString(time, "time")
        let replytoText = try optionalString(replyto, "replyto")
        if let data {
            guard case .object = data else { throw bad("data: must be an object") }
        }
        return EnvelopeFields(
            id: idText, source: sourceText, type: typeText, subject: subjectText,
            time: timeText, replyto: replytoText, hasData: data != nil)
    }

    static func bad(_ message: String) -> EventValidationError {
        EventValidationError(code: .badEvent, message: message)
    }

    static func requiredString(_ value: Field, _ path: String) throws(EventValidationError) -> String {
        switch value {
        case .absent: throw bad("\(path): required")
        case .string(let text): return text
        case .other, .object: throw bad("\(path): must be a string")
        }
    }

    static func optionalString(_ value: Field, _ path: String) throws(EventValidationError) -> String? {
        switch value {
        case .absent: return nil
        case .string(let text): return text
        case .other, .object: throw bad("\(path): must be a string")
        }
    }
    static func requiredString(_ value: JSONValue?, _ path: String) throws(EventValidationError) -> String {
        try requiredString(Field(value), path)
    }

    static func optionalString(_ value: JSONValue?, _ path: String) throws(EventValidationError) -> String? {
        try optionalString(Field(value), path)
    }

    static func isPrintableASCII(_ text: String, max: Int) -> Bool {
        Identifier.withBytes(text) { bytes in isPrintableASCII(bytes, max: max) }
    }

    static func hasScalarCount(_ text: String, in range: ClosedRange<Int>) -> Bool {
        let bytes = text.utf8.count
        if bytes <= range.upperBound {
            // At least one scalar per byte at most, and at least one byte per scalar.
            return bytes >= range.lowerBound
        }
        return range.contains(text.unicodeScalars.count)
    }

    static func isValidSubject(_ subject: String) -> Bool {
        Identifier.withBytes(subject, isValidSubject)
    }

    static func checkSubject(_ subject: String, of payload: IngressPayload) throws(EventValidationError) {
        switch payload {
        case .userUpdated(let userID, _, _):
            guard subject.utf8.count == userID.utf8.count + 1, subject.utf8.first == UInt8(ascii: "@"),
                subject.utf8.dropFirst().elementsEqual(userID.utf8)
            else {
                throw bad("subject: \"\(subject)\" must be \"@\(userID)\" (\"@\" and data.user.id)")
            }
        case .notificationMarkAllRead(let userID, _), .userDeleted(let userID, _), .userBanned(let userID, nil),
            .userUnbanned(let userID, nil):
            guard subject.utf8.count == userID.utf8.count + 1, subject.utf8.first == UInt8(ascii: "@"),
                subject.utf8.dropFirst().elementsEqual(userID.utf8)
            else {
                throw bad("subject: \"\(subject)\" must be \"@\(userID)\" (\"@\" and data.user_id)")
            }
        case .channelTypeUpdated(let name, _, _):
            guard subject == name else {
                throw bad("subject: \"\(subject)\" differs from data.name \"\(name)\"")
            }
        default:
            if let cid = payload.cid, subject != cid {
                throw bad("subject: \"\(subject)\" differs from data.cid \"\(cid)\"")
            }
        }
    }
}
