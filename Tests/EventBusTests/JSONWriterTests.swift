import Testing
@testable import EventBus
@testable import EventBusCore

private func text(_ writer: JSONWriter) -> String {
    String(decoding: writer.bytes, as: UTF8.self)
}

@Suite struct JSONWriterTests {
    @Test func separatesMembersAndElementsWithCommas() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("a"); writer.int(1)
        writer.key("b"); writer.beginArray()
        writer.int(-2); writer.uint(3); writer.bool(true); writer.bool(false); writer.null()
        writer.beginObject(); writer.endObject()
        writer.beginArray(); writer.endArray()
        writer.string("s")
        writer.endArray()
        writer.key("c"); writer.beginObject(); writer.key("d"); writer.raw(Array("1.5e3".utf8)); writer.endObject()
        writer.key("e"); writer.string("f")
        writer.endObject()
        #expect(text(writer) == #"{"a":1,"b":[-2,3,true,false,null,{},[],"s"],"c":{"d":1.5e3},"e":"f"}"#)
    }

    @Test(arguments: [
        ("plain", #""plain""#),
        ("quote\"back\\slash", #""quote\"back\\slash""#),
        ("line\nfeed\ttab\r", #""line\u000afeed\u0009tab\u000d""#),
        ("\u{0}\u{1F}", #""\u0000\u001f""#),
        ("slash/ and é€😀 kept", #""slash/ and é€😀 kept""#),
        ("\u{7F}", "\"\u{7F}\""),
    ])
    func escapesStrings(input: String, expected: String) {
        var writer = JSONWriter()
        writer.string(input)
        #expect(text(writer) == expected)
    }

    @Test func optionalValuesAreWrittenOrNull() {
        var writer = JSONWriter()
        writer.beginArray()
        writer.string(orNull: "a\"b"); writer.string(orNull: nil)
        writer.uint(orNull: 7); writer.uint(orNull: nil)
        writer.endArray()
        #expect(text(writer) == #"["a\"b",null,7,null]"#)
    }

    @Test func escapesKeys() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("a\"b\n")
        writer.null()
        writer.endObject()
        #expect(text(writer) == #"{"a\"b\u000a":null}"#)
    }

    @Test(arguments: [Int64.min, -1, 0, 7, 10, 1_234_567_890, Int64.max])
    func writesSignedIntegers(value: Int64) {
        var writer = JSONWriter()
        writer.int(value)
        #expect(text(writer) == String(value))
    }

    @Test(arguments: [UInt64.min, 9, 100, UInt64.max])
    func writesUnsignedIntegers(value: UInt64) {
        var writer = JSONWriter()
        writer.uint(value)
        #expect(text(writer) == String(value))
    }

    @Test(arguments: [
        JSONValue.null,
        .bool(false),
        .number("-0.5E+10"),
        .string("tab\there \"q\" \\ \u{1} é 😀"),
        .array([]),
        .object([]),
        .array([.null, .number("1"), .string(""), .array([.object([])])]),
        .object([(key: "b", value: .number("2")), (key: "a", value: .object([(key: "x\ny", value: .bool(true))]))]),
    ])
    func roundTripsThroughTheParser(value: JSONValue) throws {
        #expect(try JSONParser.parse(value.serialized()) == value)
    }

    @Test func roundTripsAnEventByteForByte() throws {
        let event = #"{"specversion":"1.0","id":"b7d2c1","data":{"cid":"messaging:general","n":[1,2.50,-3e2]}}"#
        let value = try JSONParser.parse(Array(event.utf8))
        #expect(value.serialized() == Array(event.utf8))
        #expect(value.description == event)
    }
}

/// Escaping skips eight plain bytes at a time; whatever the position of a character that needs an
/// escape, the text written parses back to the string given.
@Suite struct JSONWriterEscapingTests {
    @Test func everyStringOfEveryLengthRoundTripsWhereverItsSpecialCharactersSit() throws {
        let specials: [Character] = ["\"", "\\", "\n", "\u{01}", "\u{1F}", "é", "🙂", "/"]
        for length in 0..<20 {
            for position in 0..<max(length, 1) {
                for special in specials {
                    var characters = Array(repeating: Character("a"), count: length)
                    if length > 0 { characters[position] = special }
                    let text = String(characters)
                    var writer = JSONWriter()
                    writer.string(text)
                    #expect(try JSONParser.parse(writer.bytes) == .string(text), "\(text.debugDescription)")
                }
            }
        }
    }

    @Test func plainKeysAndArrayOverloadsWriteWhatTheGeneralOnesWrite() {
        var general = JSONWriter(), plain = JSONWriter()
        general.beginObject(); plain.beginObject()
        general.key("cid"); plain.key(plain: "cid")
        general.string("messaging:general"); plain.string("messaging:general")
        general.key("last_read"); plain.key(plain: "last_read")
        general.raw(AnyCollection(Array("[1,2]".utf8))); plain.raw(Array("[1,2]".utf8))
        general.key("n"); plain.key(plain: "n")
        general.raw(Array("{}".utf8)[...]); plain.raw(Array("{}".utf8))
        general.endObject(); plain.endObject()
        #expect(plain.bytes == general.bytes)
        #expect(plain.bytes == Array(#"{"cid":"messaging:general","last_read":[1,2],"n":{}}"#.utf8))
    }

    /// Writers of every starting room, fed the same long text past several growths: the same
    /// bytes as one that never grows; `takeBytes()` hands them over and leaves the writer empty.
    @Test func textIsTheSameWhateverTheRoomAndTakeBytesEmptiesTheWriter() {
        func write(_ writer: inout JSONWriter, members: Int) {
            writer.beginArray()
            for n in 0..<members {
                writer.beginObject()
                writer.key(plain: "member_with_a_longer_name"); writer.uint(UInt64(n) * 1_000_003)
                writer.key("k\(n)"); writer.string(String(repeating: "é\"x", count: n % 7))
                writer.key(plain: "n"); writer.raw(Array("[true,null]".utf8))
                writer.endObject()
            }
            writer.endArray()
        }
        var reference = JSONWriter(capacity: 100_000)
        write(&reference, members: 60)
        let text = reference.bytes
        #expect((try? JSONParser.parse(text)) != nil, "well formed")
        for capacity in [0, 1, 15, 16, 17, 100, 256] {
            var writer = JSONWriter(capacity: capacity)
            write(&writer, members: 60)
            #expect(writer.bytes == text, "capacity \(capacity)")
            #expect(writer.takeBytes() == text, "capacity \(capacity)")
            #expect(writer.bytes.isEmpty)
            writer.beginArray(); writer.int(-5); writer.endArray()
            #expect(writer.takeBytes() == Array("[-5]".utf8), "a taken writer writes anew, with no comma left over")
        }
    }
}
