import Testing
@testable import EventBus
@testable import EventBusCore

private func parse(_ text: String) throws(JSONError) -> JSONValue {
    try JSONParser.parse(Array(text.utf8))
}

private func parseError(_ bytes: [UInt8]) -> JSONError? {
    do {
        _ = try JSONParser.parse(bytes)
        return nil
    } catch {
        return error
    }
}

@Suite struct JSONParserTests {
    @Test(arguments: [
        ("null", JSONValue.null),
        ("true", .bool(true)),
        ("false", .bool(false)),
        ("0", .number("0")),
        ("-0", .number("-0")),
        ("-12.5e+3", .number("-12.5e+3")),
        ("1E-7", .number("1E-7")),
        ("\"\"", .string("")),
        ("  \t\r\n[ ]  ", .array([])),
        ("{}", .object([])),
        ("[1,[2,[3]]]", .array([.number("1"), .array([.number("2"), .array([.number("3")])])])),
        ("{\"a\":{\"b\":null},\"c\":[true]}",
         .object([(key: "a", value: .object([(key: "b", value: .null)])), (key: "c", value: .array([.bool(true)]))])),
    ] as [(String, JSONValue)])
    func acceptsValidJSON(text: String, expected: JSONValue) throws {
        #expect(try parse(text) == expected)
    }

    @Test(arguments: [
        (#""a\"b\\c\/d\b\f\n\r\t""#, "a\"b\\c/d\u{08}\u{0C}\n\r\t"),
        (#""\u0041\u00e9\u20AC""#, "Aé€"),
        (#""\ud83d\ude00""#, "😀"),
        (#""héllo wörld €😀""#, "héllo wörld €😀"),
        (#""mixed é \n after""#, "mixed é \n after"),
        (#""\u0000""#, "\u{0}"),
    ])
    func decodesStringEscapesAndUTF8(text: String, expected: String) throws {
        #expect(try parse(text) == .string(expected))
    }

    @Test func keepsObjectMembersInSourceOrder() throws {
        let value = try parse(#"{"z":1,"a":2,"m":3}"#)
        guard case .object(let members) = value else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["z", "a", "m"])
        #expect(value["a"] == .number("2"))
        #expect(value["missing"] == nil)
    }

    @Test(arguments: [
        ("", 0, "end of input"),
        ("   ", 3, "end of input"),
        ("01", 0, "leading zeros"),
        ("-01", 1, "leading zeros"),
        ("1.", 2, "decimal point"),
        (".5", 0, "expected a value"),
        ("+1", 0, "expected a value"),
        ("1e", 2, "exponent"),
        ("-", 1, "expected a digit"),
        ("[1,]", 3, "trailing comma"),
        ("{\"a\":1,}", 7, "trailing comma"),
        ("[1 2]", 3, "expected ',' or ']'"),
        ("{\"a\" 1}", 5, "expected ':'"),
        ("{a:1}", 1, "string key"),
        ("{\"a\":1", 6, "end of input"),
        ("[", 1, "end of input"),
        ("\"abc", 0, "unterminated string"),
        ("tru", 0, "invalid literal"),
        ("nul", 0, "invalid literal"),
        ("True", 0, "expected a value"),
        ("1 2", 2, "after the value"),
        ("{} x", 3, "after the value"),
        ("\"a\tb\"", 2, "control character"),
        (#""\x""#, 1, "invalid escape"),
        (#""\u12G4""#, 5, "hex digit"),
        (#""\u12""#, 3, "incomplete"),
        (#""\ud83d""#, 1, "lone high surrogate"),
        (#""\ud83dx""#, 1, "lone high surrogate"),
        (#""\ud83d\u0041""#, 1, "low surrogate"),
        (#""\ude00""#, 1, "lone low surrogate"),
        ("[1] // comment", 4, "after the value"),
        ("NaN", 0, "expected a value"),
        ("{\"a\":1,\"a\":2}", 7, "duplicate key \"a\""),
    ] as [(String, Int, String)])
    func rejectsInvalidJSONWithOffset(text: String, offset: Int, fragment: String) {
        let error = parseError(Array(text.utf8))
        #expect(error?.offset == offset, "\(text): \(String(describing: error))")
        #expect(error?.message.contains(fragment) == true, "\(text): \(String(describing: error))")
    }

    @Test(arguments: [
        ([0x22, 0xFF, 0x22], 1),  // never valid in UTF-8
        ([0x22, 0xC0, 0xAF, 0x22], 1),  // overlong '/'
        ([0x22, 0xE0, 0x80, 0xAF, 0x22], 2),  // overlong 3-byte
        ([0x22, 0xED, 0xA0, 0x80, 0x22], 2),  // UTF-8 encoded surrogate U+D800
        ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 2),  // above U+10FFFF
        ([0x22, 0xC3, 0x22], 2),  // truncated 2-byte
        ([0x22, 0xE2, 0x82], 1),  // truncated at end of input
        ([0x22, 0x80, 0x22], 1),  // lone continuation byte
        ([0x22, 0x5C, 0x6E, 0xFF, 0x22], 3),  // invalid after an escape (slow path)
        ([0xEF, 0xBB, 0xBF, 0x7B, 0x7D], 0),  // a byte order mark is not JSON
    ] as [([UInt8], Int)])
    func rejectsInvalidUTF8(bytes: [UInt8], offset: Int) {
        let error = parseError(bytes)
        #expect(error?.offset == offset, "\(bytes): \(String(describing: error))")
    }

    @Test func rejectsInvalidUTF8WithAMessageSayingSo() {
        #expect(parseError([0x22, 0xC0, 0xAF, 0x22])?.message.contains("UTF-8") == true)
    }

    @Test func acceptsFourByteUTF8AndTheLastScalar() throws {
        #expect(try JSONParser.parse([0x22, 0xF4, 0x8F, 0xBF, 0xBF, 0x22]) == .string("\u{10FFFF}"))
        #expect(try JSONParser.parse([0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22]) == .string("😀"))
    }

    @Test func acceptsNestingUpToTheDepthLimit() throws {
        let depth = JSONParser.maxDepth
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(throws: Never.self) { try parse(text) }
        let objects = String(repeating: "{\"a\":", count: depth - 1) + "{}" + String(repeating: "}", count: depth - 1)
        #expect(throws: Never.self) { try parse(objects) }
    }

    @Test func rejectsNestingOneDeeperThanTheLimit() {
        let depth = JSONParser.maxDepth + 1
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let error = parseError(Array(text.utf8))
        #expect(error?.offset == depth - 1)
        #expect(error?.message.contains("nesting") == true)
        let objects = String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)
        #expect(parseError(Array(objects.utf8))?.message.contains("nesting") == true)
    }

    @Test func rejectsADuplicateKeyInALargeObject() {
        let keys = (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        let error = parseError(Array("{\(keys),\"k30\":0}".utf8))
        #expect(error?.message == "duplicate key \"k30\"")
    }

    @Test func acceptsALargeObjectWithDistinctKeys() throws {
        let keys = (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        let value = try parse("{\(keys)}")
        #expect(value["k39"] == .number("39"))
    }

    @Test func parsesFromARawBufferWithoutCopying() throws {
        let bytes = Array(#"{"a":[1,"x"]}"#.utf8)
        let value = try bytes.withUnsafeBytes { buffer throws(JSONError) in try JSONParser.parse(buffer) }
        #expect(value == .object([(key: "a", value: .array([.number("1"), .string("x")]))]))
    }

    @Test(arguments: [
        ("42", Int64(42) as Int64?, 42.0 as Double?),
        ("-9223372036854775808", Int64.min, -9223372036854775808.0),
        ("9223372036854775808", nil, 9223372036854775808.0),
        ("1.5", nil, 1.5),
        ("2e3", nil, 2000.0),
    ] as [(String, Int64?, Double?)])
    func convertsNumbers(text: String, int: Int64?, double: Double?) throws {
        let value = try parse(text)
        #expect(value.int64Value == int)
        #expect(value.doubleValue == double)
    }

    @Test func nonNumbersHaveNoNumericValue() {
        #expect(JSONValue.string("1").int64Value == nil)
        #expect(JSONValue.null.doubleValue == nil)
    }
}
