import Testing
@testable import EventBus
@testable import EventBusCore

// MARK: - Helpers

private func parserOutcome(_ bytes: [UInt8]) -> Result<JSONValue, JSONError> {
    bytes.withUnsafeBytes { buffer in Result { () throws(JSONError) in try JSONParser.parse(buffer) } }
}

private func scannerOutcome(_ bytes: [UInt8], keys: JSONScanner.Keys = JSONScanner.Keys([]))
    -> Result<JSONScanner.Members, JSONError>
{
    bytes.withUnsafeBytes { buffer in Result { () throws(JSONError) in try JSONScanner.scan(buffer, members: keys) } }
}

private func kind(of value: JSONValue) -> JSONScanner.Kind {
    switch value {
    case .null: .null
    case .bool: .bool
    case .number: .number
    case .string: .string
    case .array: .array
    case .object: .object
    }
}

/// Records an issue unless the scanner agrees with the parser on `bytes`: both accept, with the
/// same root kind and member spans that hold the parser's member values, or both refuse with the same error.
private func expectAgreement(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    let parsed = parserOutcome(bytes)
    var names: [String] = []
    if case .success(.object(let members)) = parsed {
        names = Array(members.map(\.key).prefix(JSONScanner.Keys.maxCount - 1)) + ["absent"]
    }
    let keys = JSONScanner.Keys(names)
    let scanned = scannerOutcome(bytes, keys: keys)
    switch (parsed, scanned) {
    case (.failure(let expected), .failure(let actual)):
        #expect(actual == expected, "\(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
    case (.success(let value), .success(let members)):
        #expect(members.root == kind(of: value), sourceLocation: sourceLocation)
        for (position, name) in names.enumerated() {
            let expected = value[name]
            guard let span = members[position] else {
                #expect(expected == nil, "member \(name) not found", sourceLocation: sourceLocation)
                continue
            }
            let text = Array(bytes[span.range])
            #expect(parserOutcome(text) == .success(expected ?? .null), "member \(name)", sourceLocation: sourceLocation)
            #expect(span.kind == expected.map(kind(of:)), sourceLocation: sourceLocation)
            if span.kind == .string {
                let decoded = bytes.withUnsafeBytes { JSONScanner.string(span, in: $0) }
                #expect(JSONValue.string(decoded) == expected, sourceLocation: sourceLocation)
                #expect(span.hasEscapes == text.contains(0x5C), sourceLocation: sourceLocation)
            }
        }
    default:
        Issue.record(
            "parser \(parsed), scanner \(scanned) on \(bytes)", sourceLocation: sourceLocation)
    }
}

/// Random JSON texts, mostly valid, with the corners of the grammar in them.
struct DocumentGenerator {
    var random: SplitMix64

    static let stringPieces: [String] = [
        "a", "id", "data", "K", "\u{212A}", "é", "e\u{301}", "€", "😀", "\u{10FFFF}", #"\""#, #"\\"#, #"\/"#,
        #"\b"#, #"\f"#, #"\n"#, #"\r"#, #"\t"#, #"\u0041"#, #"\u00e9"#, #"\u212a"#, #"\ud83d\ude00"#,
        #"\uDBFF\uDFFF"#, #"\u0000"#, " ", "plain text of some length", "0123456789abcdef",
    ]
    static let numbers = ["0", "-0", "1", "-12.5e+3", "1E-7", "3.14159", "123456789012345678901234567890", "0.0e0"]
    static let whitespace = ["", "", "", " ", "\n", "\t", "\r\n  "]

    mutating func pick<T>(_ choices: [T]) -> T { choices[Int(random.next() % UInt64(choices.count))] }
    mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }

    mutating func string() -> String {
        let count = Int(random.next() % 5)
        return "\"" + (0..<count).map { _ in pick(Self.stringPieces) }.joined() + "\""
    }

    mutating func key(among used: [String]) -> String {
        // Now and then a repeated key, or one equal only once decoded.
        if !used.isEmpty && chance(4) { return pick(used) }
        if chance(3) { return pick([#""\u0069d""#, #""\u212A""#, #""K""#, #""é""#, #""e\u0301""#, #""\u00e9""#]) }
        if chance(50) { return "\"k\(random.next() % 40)\"" }
        return string()
    }

    mutating func value(depth: Int) -> String {
        let roll = random.next() % 100
        let ws = pick(Self.whitespace)
        if depth < 6 && roll < 20 {
            var used: [String] = []
            let count = Int(random.next() % (chance(5) ? 40 : 6))
            let members = (0..<count).map { _ -> String in
                let name = key(among: used)
                used.append(name)
                return ws + name + pick(Self.whitespace) + ":" + pick(Self.whitespace) + value(depth: depth + 1)
            }
            return "{" + members.joined(separator: ",") + ws + "}"
        }
        if depth < 6 && roll < 35 {
            let count = Int(random.next() % 6)
            return "[" + (0..<count).map { _ in ws + value(depth: depth + 1) }.joined(separator: ",") + "]"
        }
        if roll < 65 { return string() }
        if roll < 85 { return pick(Self.numbers) }
        return pick(["true", "false", "null"])
    }

    static let interesting: [UInt8] = [
        0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A, 0x20, 0x00, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xC2, 0xE0,
        0xED, 0xF0, 0xF4, 0xF5, 0xFF, 0x30, 0x2D, 0x2E, 0x65, 0x75, 0x6E, 0x74,
    ]

    /// `text` with a few random byte flips, a truncation or inserted bytes.
    mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        for _ in 0...(random.next() % 3) {
            let position = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
            switch random.next() % 4 {
            case 0 where !bytes.isEmpty: bytes[position] = pick(Self.interesting)
            case 1 where !bytes.isEmpty: bytes[position] ^= UInt8(truncatingIfNeeded: 1 << (random.next() % 8))
            case 2: bytes = Array(bytes.prefix(position))
            default: bytes.insert(pick(Self.interesting), at: position)
            }
        }
        return bytes
    }
}

// MARK: - Scanner against parser

@Suite struct JSONScannerTests {
    /// The parser tests' cases, valid and invalid.
    static let conformance: [String] = [
        "null", "true", "false", "0", "-0", "-12.5e+3", "1E-7", "\"\"", "  \t\r\n[ ]  ", "{}", "[1,[2,[3]]]",
        "{\"a\":{\"b\":null},\"c\":[true]}", #""a\"b\\c\/d\b\f\n\r\t""#, #""\u0041\u00e9\u20AC""#,
        #""\ud83d\ude00""#, #""héllo wörld €😀""#, #""mixed é \n after""#, #""\u0000""#, #"{"z":1,"a":2,"m":3}"#,
        "", "   ", "01", "-01", "1.", ".5", "+1", "1e", "-", "[1,]", "{\"a\":1,}", "[1 2]", "{\"a\" 1}", "{a:1}",
        "{\"a\":1", "[", "\"abc", "tru", "nul", "True", "1 2", "{} x", "\"a\tb\"", #""\x""#, #""\u12G4""#,
        #""\u12""#, #""\ud83d""#, #""\ud83dx""#, #""\ud83d\u0041""#, #""\ude00""#, "[1] // comment", "NaN",
        "{\"a\":1,\"a\":2}", "\"\\", "\"\\u", "{\"a\":1 ,\"b\" : [ ] }", "[-]", "[1.e5]", "-1.5E+09", "{\"\":0}",
        "{\"\":0,\"\":1}",
    ]

    static let conformanceBytes: [[UInt8]] = [
        [0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xE0, 0x80, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xE2, 0x82], [0x22, 0x80, 0x22],
        [0x22, 0x5C, 0x6E, 0xFF, 0x22], [0xEF, 0xBB, 0xBF, 0x7B, 0x7D], [0x22, 0xF4, 0x8F, 0xBF, 0xBF, 0x22],
        [0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22], [0x22, 0xE0, 0xA0, 0x80, 0x22], [0x22, 0xF0, 0x8F, 0x80, 0x80, 0x22],
        [0x22, 0xC2, 0x7F, 0x22], [0x22, 0xE1, 0x80, 0x7F, 0x22], [0x22, 0xF1, 0x80, 0x80, 0x22],
    ]

    @Test func agreesWithTheParserOnTheConformanceCases() {
        for text in Self.conformance { expectAgreement(Array(text.utf8)) }
        for bytes in Self.conformanceBytes { expectAgreement(bytes) }
    }

    @Test func agreesWithTheParserAtTheDepthLimitAndOneBeyond() {
        for depth in [JSONParser.maxDepth - 1, JSONParser.maxDepth, JSONParser.maxDepth + 1] {
            expectAgreement(Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8))
            let objects = String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)
            expectAgreement(Array(objects.utf8))
            let mixed = String(repeating: "[{\"a\":", count: depth / 2) + "[]" + String(repeating: "}]", count: depth / 2)
            expectAgreement(Array(mixed.utf8))
        }
    }

    @Test func refusesRepeatedKeysAtEveryLevelAsTheParserDoes() {
        let cases = [
            #"{"a":{"b":1,"b":2}}"#, #"{"a":[{"b":1,"c":{"d":0,"d":0}}]}"#, #"{"id":1,"\u0069d":2}"#,
            #"{"x":{"K":1,"\u212A":2}}"#, #"{"x":{"\u00e9":1,"é":2}}"#, #"{"x":{"é":1,"e\u0301":2}}"#,
            #"{"a":{"b":1},"c":{"b":1}}"#, #"{"a":{"a":{"a":1}}}"#, #"{"x":{"ab":1,"a":2,"abc":3,"ab":4}}"#,
        ]
        for text in cases { expectAgreement(Array(text.utf8)) }
    }

    @Test func agreesOnLargeObjectsAndManyOpenKeys() {
        for count in [14, 15, 16, 17, 40, 200] {
            let keys = (0..<count).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
            expectAgreement(Array("{\(keys)}".utf8))
            expectAgreement(Array("{\(keys),\"k\(count / 2)\":0}".utf8))
            expectAgreement(Array("{\"x\":{\(keys)},\"y\":{\(keys)}}".utf8))
        }
        // More than 64 keys open at once (nested, so none can be popped): the heap fallback.
        let deep = Self.keysOpenAtOnce(levels: 10)
        expectAgreement(Array(deep.utf8))
        expectAgreement(Array("{\"x\":\(deep),\"k3\":1}".utf8))
        expectAgreement(Array("{\"x\":\(deep),\"x\":1}".utf8))
        expectAgreement(Array("{\"x\":\(deep.dropLast())}".utf8))
    }

    /// With a stack buffer for one key, every object of two keys or more not asked for overflows it
    /// and is scanned again with the heap buffer: the outcome is the same as with the full buffer
    /// (and so the parser's, which the other tests check), for documents of every shape.
    @Test func theHeapFallbackGivesWhatTheStackGives() {
        func outcome(_ bytes: [UInt8], stackKeys: Int, heapFallback: Bool = true) -> Result<JSONScanner.Members, JSONError> {
            bytes.withUnsafeBytes { buffer in
                Result { () throws(JSONError) in
                    try JSONScanner.scan(buffer, members: JSONScanner.Keys(["k1", "n", "absent"]), stackKeys: stackKeys,
                                         heapFallback: heapFallback)
                }
            }
        }
        var generator = DocumentGenerator(random: SplitMix64(seed: 9))
        var documents = [Self.keysOpenAtOnce(levels: 3), #"{"a":1,"b":{"c":2,"d":3},"a":4}"#, #"{"k1":1,"x":2,"y":3}"#]
        for _ in 0..<500 { documents.append(generator.value(depth: 0)) }
        var overflowed = 0
        for document in documents.map({ Array($0.utf8) }) {
            let tiny = outcome(document, stackKeys: 1)
            #expect(tiny == outcome(document, stackKeys: JSONScanner.stackKeys), "\(String(decoding: document, as: UTF8.self))")
            if case .failure(let error) = outcome(document, stackKeys: 1, heapFallback: false), error.offset == -1 {
                overflowed += 1
            }
        }
        // The fallback really ran: without it, many of these documents cannot be scanned with one key's room.
        #expect(overflowed > 50)
    }

    /// `levels` objects nested in one another, each with 14 keys before the one holding the next.
    /// The scanner keeps the keys of every open object while it has at most 15 (past that it
    /// compares `String`s), so all 15 of each level are held while the innermost is scanned: 150
    /// for 10 levels, more than its stack buffer takes (64).
    static func keysOpenAtOnce(levels: Int) -> String {
        var text = #"{"last":true}"#
        for level in 0..<levels {
            let keys = (0..<14).map { "\"k\($0)\":\(level)" }.joined(separator: ",")
            text = "{\(keys),\"n\":\(text)}"
        }
        return text
    }

    @Test(arguments: [1 as UInt64, 2, 3, 4])
    func agreesWithTheParserOnRandomAndMutatedDocuments(seed: UInt64) {
        var generator = DocumentGenerator(random: SplitMix64(seed: seed))
        var valid = 0, invalid = 0
        for _ in 0..<2_000 {
            let document = Array((generator.pick(DocumentGenerator.whitespace) + generator.value(depth: 0)).utf8)
            for bytes in [document, generator.mutate(document), generator.mutate(document), generator.mutate(document)] {
                expectAgreement(bytes)
                if case .success = parserOutcome(bytes) { valid += 1 } else { invalid += 1 }
            }
        }
        // Both sides of the grammar are well exercised.
        #expect(valid > 1_500 && invalid > 1_500, "\(valid) valid, \(invalid) invalid")
    }

    @Test func decodesStringsOnlyWhenAskedAndAsTheParserWould() throws {
        let bytes = Array(#"{"a":"x\ny\u00e9\ud83d\ude00","b":"plain","c":7}"#.utf8)
        let members = try bytes.withUnsafeBytes { buffer throws(JSONError) in
            try JSONScanner.scan(buffer, members: JSONScanner.Keys(["a", "b", "c", "d"]))
        }
        #expect(members.root == .object)
        #expect(members[0]?.hasEscapes == true)
        #expect(members[1]?.hasEscapes == false)
        #expect(members[2] == JSONScanner.Span(kind: .number, range: 46..<47))
        #expect(members[3] == nil)
        #expect(bytes.withUnsafeBytes { JSONScanner.string(members[0]!, in: $0) } == "x\nyé😀")
        #expect(bytes.withUnsafeBytes { JSONScanner.string(members[1]!, in: $0) } == "plain")
    }
}

// MARK: - Envelope fast path against the parsing path

/// Random events, valid and broken in every envelope field.
struct EventGenerator {
    var random: SplitMix64

    mutating func pick<T>(_ choices: [T]) -> T { choices[Int(random.next() % UInt64(choices.count))] }

    static let wrongTypes = ["1", "null", "true", "{}", "[]", #"{"a":"b"}"#, "-0.5"]

    mutating func field(_ name: String, good: [String], bad: [String], optional: Bool = false) -> String? {
        let roll = random.next() % 100
        if roll < 82 { return "\"\(name)\":\(pick(good))" }
        if roll < 87 { return nil }  // missing
        if roll < 93 { return "\"\(name)\":\(pick(Self.wrongTypes))" }
        if optional && roll < 95 { return nil }
        return "\"\(name)\":\(pick(bad))"
    }

    mutating func event() -> String {
        let long = String(repeating: "x", count: 129)
        let source257 = "\"/" + String(repeating: "s", count: 256) + "\""
        let members = [
            field("specversion", good: [#""1.0""#, #""1\u002e0""#], bad: [#""1.1""#, #""""#, #""1.0 ""#]),
            field(
                "id", good: [#""receipt-reducer:123:0""#, #""b7d2c1""#, "\"\(String(repeating: "i", count: 128))\"",
                             #""a\"b""#, #""~!""#],
                bad: [#""""#, "\"\(long)\"", #""a b\u0001""#, #""é""#, #""\t""#]),
            field(
                "source", good: [#""/eventbus/receipt-reducer""#, #""/chat-api""#, #""é""#,
                                 "\"" + String(repeating: "é", count: 256) + "\""],
                bad: [#""""#, source257, "\"" + String(repeating: "é", count: 257) + "\""]),
            field("type", good: [#""message.read""#, #""channel.created""#, #""query""#, #""a_1.b""#],
                  bad: [#""Message""#, #""1abc""#, #""""#, "\"a\(String(repeating: "b", count: 64))\""]),
            field("subject", good: [#""messaging:team""#, #""@u14""#, #""é""#, "\"\(String(repeating: "s", count: 256))\""],
                  bad: [#""a/b""#, #""""#, #""\/""#, "\"\(String(repeating: "s", count: 257))\""]),
            field("time", good: [#""2026-11-22T03:10:00.123Z""#, #""yesterday""#], bad: [#""""#], optional: true),
            field("replyto", good: [#""client-7""#, #""""#], bad: [#""""#], optional: true),
            field("data", good: [#"{"cid":"messaging:team","user_id":"u14","last_read_message_id":"m49"}"#, "{}",
                                 #"{"a":{"b":[1,2,{"c":null}]}}"#],
                  bad: ["[]", #""x""#], optional: true),
            field("datacontenttype", good: [#""application/json""#], bad: ["7"], optional: true),
            // Rarely, `id` spelt with an escape: a repeated key when `id` is there too.
            random.next() % 40 == 0 ? #""\u0069d":"x""# : nil,
        ].compactMap { $0 }
        var shuffled = members
        shuffled.shuffle(using: &random)
        if random.next() % 50 == 0 { return pick(["[]", "\"event\"", "7", "null"]) }
        return "{" + shuffled.joined(separator: random.next() % 5 == 0 ? " ,\n " : ",") + "}"
    }
}

private func oldPath(_ bytes: [UInt8], stage: String) -> Result<ValidatedEvent, EventValidationError> {
    bytes.withUnsafeBytes { buffer in
        Result { () throws(EventValidationError) in try EventValidator.validate(parsing: buffer, stage: stage) }
    }
}

private func newPath(_ bytes: [UInt8], stage: String) -> Result<ValidatedEvent, EventValidationError> {
    Result { () throws(EventValidationError) in try EventValidator.validate(bytes, stage: stage) }
}

private func scanned(_ bytes: [UInt8]) -> Result<EnvelopeFields, EventValidationError> {
    Result { () throws(EventValidationError) in
        var fields = try EventValidator.scanEnvelope(bytes)
        fields.dataRange = nil
        return fields
    }
}

private func expectSameEnvelope(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    let old = oldPath(bytes, stage: Stage.out)
    #expect(newPath(bytes, stage: Stage.out) == old, "\(String(decoding: bytes, as: UTF8.self))",
            sourceLocation: sourceLocation)
    #expect(scanned(bytes) == old.map { EnvelopeFields($0.envelope) }, "\(String(decoding: bytes, as: UTF8.self))",
            sourceLocation: sourceLocation)
}

@Suite struct EnvelopeScanTests {
    static let reducerEvent =
        #"{"specversion":"1.0","id":"receipt-reducer:123:0","source":"/eventbus/receipt-reducer","type":"message.read","subject":"messaging:team","time":"2026-11-22T03:10:00.123Z","data":{"cid":"messaging:team","user_id":"u14","last_read_message_id":"m49","last_read":"2026-11-22T03:10:00.123Z"}}"#

    @Test func scansTheReducerEventToTheParsedEnvelope() throws {
        let bytes = Array(Self.reducerEvent.utf8)
        let fields = try EventValidator.scanEnvelope(bytes)
        #expect(fields.id == "receipt-reducer:123:0")
        #expect(fields.source == "/eventbus/receipt-reducer")
        #expect(fields.type == "message.read")
        #expect(fields.subject == "messaging:team")
        #expect(fields.time == "2026-11-22T03:10:00.123Z")
        #expect(fields.replyto == nil)
        #expect(fields.hasData)
        let range = try #require(fields.dataRange)
        #expect(String(decoding: bytes[range], as: UTF8.self).hasPrefix(#"{"cid":"#))
        expectSameEnvelope(bytes)
    }

    @Test func fastPathKeepsDataParsedForItsReaders() throws {
        let envelope = try EventValidator.validate(Array(Self.reducerEvent.utf8), stage: Stage.out).envelope
        #expect(envelope.data?["last_read_message_id"] == .string("m49"))
    }

    @Test func givesTheParserErrorForBrokenJSON() {
        let bytes = Array(#"{"specversion":"1.0","id":"a","id":"b"}"#.utf8)
        #expect(throws: EventValidationError(code: .badJSON, message: #"event: not valid JSON at byte 30: duplicate key "id""#)) {
            try EventValidator.scanEnvelope(bytes)
        }
        expectSameEnvelope(bytes)
    }

    @Test(arguments: [11 as UInt64, 12, 13])
    func agreesWithTheParsingPathOnGeneratedEvents(seed: UInt64) {
        var generator = EventGenerator(random: SplitMix64(seed: seed))
        var mutator = DocumentGenerator(random: SplitMix64(seed: seed &* 31))
        var outcomes: [String: Int] = [:]
        for _ in 0..<1_500 {
            let bytes = Array(generator.event().utf8)
            for event in [bytes, mutator.mutate(bytes)] {
                expectSameEnvelope(event)
                switch oldPath(event, stage: Stage.out) {
                case .success: outcomes["ok", default: 0] += 1
                case .failure(let error): outcomes[error.code.wire + " " + (error.message.split(separator: ":").first ?? ""), default: 0] += 1
                }
            }
        }
        // Good events, bad JSON, and a refusal for every envelope field.
        for outcome in ["ok", "bad_json event", "bad_event event", "bad_event specversion", "bad_event id",
                        "bad_event source", "bad_event type", "bad_event subject", "bad_event time",
                        "bad_event replyto", "bad_event data"] {
            #expect(outcomes[outcome, default: 0] > 20, "\(outcome): \(outcomes)")
        }
    }

    @Test func stageInStillTakesTheIngressPath() throws {
        let bytes = Array(Self.reducerEvent.utf8)
        #expect(newPath(bytes, stage: Stage.in) == oldPath(bytes, stage: Stage.in))
    }
}
