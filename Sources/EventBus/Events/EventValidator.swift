/// Validates event frames at the broker's door (PROTOCOL.md, "Events"; SPEC.md, "Ingress events").
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
        let root: JSONValue
        do {
            root = try JSONParser.parse(frame)
        } catch {
            throw EventValidationError(
                code: .badJSON, message: "event: not valid JSON at byte \(error.offset): \(error.message)")
        }
        return try validate(root, stage: stage)
    }

    /// Validates one event frame held in an array; see the `UnsafeRawBufferPointer` overload.
    public static func validate(_ frame: [UInt8], stage: String) throws(EventValidationError) -> ValidatedEvent {
        let result = frame.withUnsafeBytes { buffer in
            Result { () throws(EventValidationError) -> ValidatedEvent in try validate(buffer, stage: stage) }
        }
        return try result.get()
    }

    /// Validates an event already parsed to a ``JSONValue``.
    public static func validate(_ event: JSONValue, stage: String) throws(EventValidationError) -> ValidatedEvent {
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
        let envelope = EventEnvelope(
            id: idText, source: sourceText, type: typeText, subject: subjectText,
            time: timeText, replyto: replytoText, data: data)

        guard stage == Stage.in else {
            return ValidatedEvent(envelope: envelope)
        }
        guard let eventType = EventType(rawValue: typeText), eventType.isIngress else {
            throw EventValidationError(code: .unknownType, message: "type: \"\(typeText)\" is not an ingress type")
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

    static func bad(_ message: String) -> EventValidationError {
        EventValidationError(code: .badEvent, message: message)
    }

    static func requiredString(_ value: JSONValue?, _ path: String) throws(EventValidationError) -> String {
        guard let value else { throw bad("\(path): required") }
        guard case .string(let text) = value else { throw bad("\(path): must be a string") }
        return text
    }

    static func optionalString(_ value: JSONValue?, _ path: String) throws(EventValidationError) -> String? {
        guard let value else { return nil }
        guard case .string(let text) = value else { throw bad("\(path): must be a string") }
        return text
    }

    static func isPrintableASCII(_ text: String, max: Int) -> Bool {
        Identifier.withBytes(text) { bytes in
            guard bytes.count >= 1, bytes.count <= max else { return false }
            for byte in bytes where byte < 0x20 || byte > 0x7E {
                return false
            }
            return true
        }
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
        Identifier.withBytes(subject) { bytes in
            guard bytes.count >= 1, bytes.count <= maxSubjectBytes else { return false }
            for byte in bytes where byte == UInt8(ascii: "/") {
                return false
            }
            return true
        }
    }

    static func checkSubject(_ subject: String, of payload: IngressPayload) throws(EventValidationError) {
        switch payload {
        case .userUpdated(let userID, _, _):
            guard subject.utf8.count == userID.utf8.count + 1, subject.utf8.first == UInt8(ascii: "@"),
                subject.utf8.dropFirst().elementsEqual(userID.utf8)
            else {
                throw bad("subject: \"\(subject)\" must be \"@\(userID)\" (\"@\" and data.user.id)")
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
