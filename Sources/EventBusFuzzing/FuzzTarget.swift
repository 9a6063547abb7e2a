import EventBus
import EventBusBroker

/// The fuzz target: one input through the frame parser, the JSON parser and
/// scanner and the event validator, checking that they agree, not only that
/// they do not crash.
///
/// The whole input is a JSON text and an event; split on `\n` it is also a
/// command message (a routing id frame is put in front, as the ROUTER does).
/// The invariants:
///
/// - ``JSONScanner`` and ``JSONParser`` accept the same texts, with the same
///   top-level kind, and refuse the others with the same ``JSONError``;
///   a parsed value serializes to a text that parses back to it.
/// - ``EventValidator/scanEnvelope(_:)-(UnsafeRawBufferPointer)`` and the parsing
///   path (parse, then ``EventValidator/validate(_:stage:)-(JSONValue,_)``) give the
///   same fields or the same error; the byte validator agrees with both.
/// - ``EventValidator/checkIngress(_:)-([UInt8])`` gives the fields of the envelope that
///   ``EventValidator/validate(_:stage:)-([UInt8],_)`` at stage `in` accepts, or the same error.
/// - An event valid at stage `in` is valid at every stage.
/// - A refusal carries an error code of the wire protocol the function may
///   answer (`bad_json`, `bad_event`, `unknown_type` for events; `bad_frame`,
///   `bad_verb` for frames), and a message.
/// - A parsed command has a request verb, a CORR of at most 64 bytes and its
///   arguments; an event frame of a PUB goes through the validator at its stage.
public enum FuzzTarget {
    /// The codes the event validator may answer.
    static let eventCodes: Set<ErrorCode> = [.badJSON, .badEvent, .unknownType]
    /// The codes the frame parser may answer.
    static let frameCodes: Set<ErrorCode> = [.badFrame, .badVerb]

    /// Runs every check on `input`.
    ///
    /// - Throws: ``FuzzFailure`` naming the first invariant that does not hold.
    public static func check(_ input: [UInt8]) throws(FuzzFailure) {
        try checkJSON(input)
        try checkEvent(input)
        try checkCommand(input)
    }

    /// The scanner and the parser agree; parsed values round-trip.
    static func checkJSON(_ input: [UInt8]) throws(FuzzFailure) {
        let scanned = input.withUnsafeBytes { bytes in
            Result { () throws(JSONError) -> JSONScanner.Kind in try JSONScanner.validate(bytes) }
        }
        let parsed = Result { () throws(JSONError) -> JSONValue in try JSONParser.parse(input) }
        switch (scanned, parsed) {
        case (.success(let kind), .success(let value)):
            guard kind == Self.kind(of: value) else {
                throw FuzzFailure("JSONScanner says \(kind), JSONParser parsed \(value)", input: input)
            }
            let text = value.serialized()
            guard let again = try? JSONParser.parse(text), again == value else {
                throw FuzzFailure("serialized value does not parse back: \(String(decoding: text, as: UTF8.self))", input: input)
            }
        case (.failure(let scanError), .failure(let parseError)):
            guard scanError == parseError else {
                throw FuzzFailure("JSONScanner refuses with \(scanError), JSONParser with \(parseError)", input: input)
            }
        case (.success(let kind), .failure(let error)):
            throw FuzzFailure("JSONScanner accepts (\(kind)), JSONParser refuses: \(error)", input: input)
        case (.failure(let error), .success):
            throw FuzzFailure("JSONParser accepts, JSONScanner refuses: \(error)", input: input)
        }
    }

    /// The scan and the parsing path agree on the envelope.
    static func checkEvent(_ input: [UInt8]) throws(FuzzFailure) {
        let scanned = Result { () throws(EventValidationError) -> EnvelopeFields in try EventValidator.scanEnvelope(input) }
        let parsed = Result { () throws(EventValidationError) -> EnvelopeFields in
            let root: JSONValue
            do throws(JSONError) {
                root = try JSONParser.parse(input)
            } catch {
                throw EventValidationError(code: .badJSON, message: "event: not valid JSON at byte \(error.offset): \(error.message)")
            }
            return EnvelopeFields(try EventValidator.validate(root, stage: "out").envelope)
        }
        let atOut = Result { () throws(EventValidationError) -> ValidatedEvent in try EventValidator.validate(input, stage: "out") }
        let atIn = Result { () throws(EventValidationError) -> ValidatedEvent in try EventValidator.validate(input, stage: Stage.in) }

        switch (scanned, parsed) {
        case (.success(var fields), .success(let expected)):
            fields.dataRange = nil
            guard fields == expected else {
                throw FuzzFailure("scanEnvelope gives \(fields), the parsing path \(expected)", input: input)
            }
        case (.failure(let scanError), .failure(let parseError)):
            guard scanError == parseError else {
                throw FuzzFailure("scanEnvelope refuses with \(scanError), the parsing path with \(parseError)", input: input)
            }
        case (.success, .failure(let error)):
            throw FuzzFailure("scanEnvelope accepts, the parsing path refuses: \(error)", input: input)
        case (.failure(let error), .success):
            throw FuzzFailure("the parsing path accepts, scanEnvelope refuses: \(error)", input: input)
        }
        switch (atOut, scanned) {
        case (.success(let event), .success(let fields)):
            guard EnvelopeFields(event.envelope).id == fields.id, (event.envelope.data != nil) == fields.hasData else {
                throw FuzzFailure("validate(stage: out) and scanEnvelope see different envelopes", input: input)
            }
        case (.failure(let error), .failure(let scanError)):
            guard error == scanError else {
                throw FuzzFailure("validate(stage: out) refuses with \(error), scanEnvelope with \(scanError)", input: input)
            }
        default:
            throw FuzzFailure("validate(stage: out) and scanEnvelope disagree on accepting", input: input)
        }
        try checkIngress(input, against: atIn)
        for stage in [Stage.in, Stage.out] {
            try checkSpans(input, stage: stage, against: stage == Stage.in ? atIn.map(\.envelope) : atOut.map(\.envelope))
        }
        switch atIn {
        case .success(let event):
            guard event.payload != nil else {
                throw FuzzFailure("an event valid at stage in has no typed payload", input: input)
            }
            guard case .success = atOut else {
                throw FuzzFailure("an event valid at stage in is refused at stage out", input: input)
            }
        case .failure(let error):
            try checkRefusal(error.code, error.message, allowed: eventCodes, input: input)
        }
        if case .failure(let error) = atOut {
            try checkRefusal(error.code, error.message, allowed: [.badJSON, .badEvent], input: input)
        }
    }

    /// The ingress check agrees with validation at stage `in`.
    static func checkIngress(_ input: [UInt8], against atIn: Result<ValidatedEvent, EventValidationError>) throws(FuzzFailure) {
        let checked = Result { () throws(EventValidationError) -> EnvelopeFields in try EventValidator.checkIngress(input) }
        switch (checked, atIn) {
        case (.success(var fields), .success(let event)):
            fields.dataRange = nil
            let expected = EnvelopeFields(event.envelope)
            guard fields == expected else {
                throw FuzzFailure("checkIngress gives \(fields), validate(stage: in) \(expected)", input: input)
            }
        case (.failure(let error), .failure(let expected)):
            guard error == expected else {
                throw FuzzFailure("checkIngress refuses with \(error), validate(stage: in) with \(expected)", input: input)
            }
        case (.success, .failure(let error)):
            throw FuzzFailure("checkIngress accepts, validate(stage: in) refuses: \(error)", input: input)
        case (.failure(let error), .success):
            throw FuzzFailure("validate(stage: in) accepts, checkIngress refuses: \(error)", input: input)
        }
    }

    /// `envelopeSpans` vouches only for what the validator accepts at `stage`, and its ranges hold
    /// the attributes the validator read.
    static func checkSpans(_ input: [UInt8], stage: String, against validated: Result<EventEnvelope, EventValidationError>) throws(FuzzFailure) {
        guard let spans = input.withUnsafeBytes({ EventValidator.envelopeSpans($0, stage: stage) }) else { return }
        guard case .success(let envelope) = validated else {
            throw FuzzFailure("envelopeSpans vouches at \(stage) for an event the validator refuses", input: input)
        }
        func text(_ range: Range<Int>) -> String { String(decoding: input[range], as: UTF8.self) }
        guard text(spans.id) == envelope.id, text(spans.source) == envelope.source, text(spans.type) == envelope.type,
              text(spans.subject) == envelope.subject, spans.hasTime == (envelope.time != nil) else {
            throw FuzzFailure("envelopeSpans at \(stage) reads \(spans), the validator \(envelope)", input: input)
        }
    }

    /// The frame parser, on the input split at `\n`.
    static func checkCommand(_ input: [UInt8]) throws(FuzzFailure) {
        let frames = [Array("peer".utf8)] + input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
        let message: CommandMessage
        do {
            message = try CommandMessage.parse(frames)
        } catch {
            try checkRefusal(error.error.code, error.error.message, allowed: frameCodes, input: input)
            guard error.correlation.count <= WireProtocol.maxCorrelationBytes else {
                throw FuzzFailure("a refusal answers with a CORR of \(error.correlation.count) bytes", input: input)
            }
            guard error.peer.isEmpty || error.peer == frames[0] else {
                throw FuzzFailure("a refusal goes to another peer", input: input)
            }
            return
        }
        guard CommandMessage.requestVerbs.contains(message.verb), message.peer == frames[0],
              message.correlation == frames[3], message.correlation.count <= WireProtocol.maxCorrelationBytes,
              Array(message.arguments) == Array(frames[4...]) else {
            throw FuzzFailure("a parsed command does not match its frames", input: input)
        }
        // A PUBS is split into the PUB it stands for, as the broker does: refused with a
        // frame code, or a PUB of the batch's events.
        let pub: CommandMessage
        do {
            pub = try message.unbatched()
        } catch {
            try checkRefusal(error.code, error.message, allowed: frameCodes.union([.tooLarge]), input: input)
            return
        }
        if message.verb == .pubs, let batch = message.arguments.last {
            // Each event took its bytes and at least two more (a digit and the newline).
            let events = pub.arguments.dropFirst()
            guard !events.isEmpty, events.count <= WireProtocol.maxBatchEvents,
                  events.reduce(0, { $0 + $1.count + 2 }) <= batch.count else {
                throw FuzzFailure("a PUBS batch split into events its frame cannot hold", input: input)
            }
        }
        // A PUB's events go through the validator at their stage, as the broker does.
        guard pub.verb == .pub, let stageFrame = pub.arguments.first else { return }
        let stage = String(decoding: stageFrame, as: UTF8.self)
        for event in pub.arguments.dropFirst() {
            do {
                _ = try EventValidator.validate(event, stage: stage)
            } catch {
                try checkRefusal(error.code, error.message, allowed: eventCodes, input: input)
            }
        }
    }

    static func checkRefusal(_ code: ErrorCode, _ message: String, allowed: Set<ErrorCode>, input: [UInt8]) throws(FuzzFailure) {
        guard allowed.contains(code) else {
            throw FuzzFailure("refused with \(code.wire), expected one of \(allowed.map(\.wire).sorted())", input: input)
        }
        guard !message.isEmpty else {
            throw FuzzFailure("refused with \(code.wire) and no message", input: input)
        }
    }

    static func kind(of value: JSONValue) -> JSONScanner.Kind {
        switch value {
        case .null: .null
        case .bool: .bool
        case .number: .number
        case .string: .string
        case .array: .array
        case .object: .object
        }
    }
}
