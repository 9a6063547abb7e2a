/// A strict RFC 8259 JSON parser over raw bytes, in a single pass.
///
/// It accepts exactly the JSON grammar: any value at the top level, the four
/// whitespace bytes, no trailing commas, no leading zeros, no comments and
/// nothing after the value but whitespace. The input must be UTF-8: every
/// string is validated (overlong forms, surrogates encoded in UTF-8 and code
/// points above U+10FFFF are refused), and a `\u` escape of a surrogate must
/// be a high surrogate followed by an escaped low one. An object with a
/// repeated key is refused. Arrays and objects nest at most ``maxDepth`` deep.
///
/// No Foundation, no Codable: a hand-written recursive descent parser.
public enum JSONParser {
    /// The deepest nesting of arrays and objects accepted; one more is an error.
    public static let maxDepth = 64

    /// Parses one JSON text.
    ///
    /// - Parameter bytes: the UTF-8 text.
    /// - Returns: the value.
    /// - Throws: ``JSONError`` naming the byte offset and what is wrong there.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONError) -> JSONValue {
        var parser = Parser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.index != bytes.count {
            throw JSONError(offset: parser.index, message: "unexpected \(describe(bytes[parser.index])) after the value")
        }
        return value
    }

    /// Parses one JSON text held in an array of bytes.
    ///
    /// - Parameter bytes: the UTF-8 text.
    /// - Returns: the value.
    /// - Throws: ``JSONError`` naming the byte offset and what is wrong there.
    public static func parse(_ bytes: [UInt8]) throws(JSONError) -> JSONValue {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONError) -> JSONValue in try parse(buffer) }
        }
        return try result.get()
    }

    /// A byte as it should appear in a message.
    static func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F {
            return "character '\(Character(Unicode.Scalar(byte)))'"
        }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x\(byte < 16 ? "0" : "")\(hex)"
    }
}

private enum Byte {
    static let quote: UInt8 = 0x22
    static let backslash: UInt8 = 0x5C
    static let slash: UInt8 = 0x2F
    static let comma: UInt8 = 0x2C
    static let colon: UInt8 = 0x3A
    static let minus: UInt8 = 0x2D
    static let plus: UInt8 = 0x2B
    static let dot: UInt8 = 0x2E
    static let zero: UInt8 = 0x30
    static let nine: UInt8 = 0x39
    static let openBrace: UInt8 = 0x7B
    static let closeBrace: UInt8 = 0x7D
    static let openBracket: UInt8 = 0x5B
    static let closeBracket: UInt8 = 0x5D
}

/// The parser's cursor over the input.
private struct Parser {
    let bytes: UnsafeRawBufferPointer
    var index = 0

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    @inline(__always)
    func fail(_ message: String, at offset: Int? = nil) -> JSONError {
        JSONError(offset: offset ?? index, message: message)
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    func unexpected(_ expected: String) -> JSONError {
        if index >= bytes.count {
            return fail("unexpected end of input, expected \(expected)")
        }
        return fail("unexpected \(JSONParser.describe(bytes[index])), expected \(expected)")
    }

    mutating func parseValue(depth: Int) throws(JSONError) -> JSONValue {
        guard index < bytes.count else { throw unexpected("a value") }
        switch bytes[index] {
        case Byte.openBrace:
            return try parseObject(depth: depth + 1)
        case Byte.openBracket:
            return try parseArray(depth: depth + 1)
        case Byte.quote:
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case Byte.minus, Byte.zero...Byte.nine:
            return .number(try parseNumber())
        default:
            throw unexpected("a value")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONError) {
        let start = index
        let count = word.utf8CodeUnitCount
        let text = word.utf8Start
        for offset in 0..<count {
            guard index < bytes.count, bytes[index] == text[offset] else {
                throw fail("invalid literal, expected \(word)", at: start)
            }
            index += 1
        }
    }

    mutating func parseObject(depth: Int) throws(JSONError) -> JSONValue {
        if depth > JSONParser.maxDepth {
            throw fail("nesting deeper than \(JSONParser.maxDepth)")
        }
        index += 1  // {
        skipWhitespace()
        var members: [(key: String, value: JSONValue)] = []
        if index < bytes.count && bytes[index] == Byte.closeBrace {
            index += 1
            return .object(members)
        }
        // Event objects hold a handful of members: one allocation, not four.
        members.reserveCapacity(8)
        var seen: Set<String>? = nil
        while true {
            guard index < bytes.count, bytes[index] == Byte.quote else {
                throw unexpected("a string key")
            }
            let keyOffset = index
            let key = try parseString()
            if var keys = seen {
                seen = nil
                if !keys.insert(key).inserted {
                    throw fail("duplicate key \"\(key)\"", at: keyOffset)
                }
                seen = keys
            } else {
                for member in members where member.key == key {
                    throw fail("duplicate key \"\(key)\"", at: keyOffset)
                }
                if members.count == 15 {
                    // Past a handful of keys a set beats the linear scan.
                    seen = Set(members.lazy.map(\.key) + [key])
                }
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == Byte.colon else {
                throw unexpected("':'")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            members.append((key: key, value: value))
            skipWhitespace()
            guard index < bytes.count else { throw unexpected("',' or '}'") }
            switch bytes[index] {
            case Byte.comma:
                index += 1
                skipWhitespace()
                if index < bytes.count && bytes[index] == Byte.closeBrace {
                    throw fail("trailing comma in object")
                }
            case Byte.closeBrace:
                index += 1
                return .object(members)
            default:
                throw unexpected("',' or '}'")
            }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONError) -> JSONValue {
        if depth > JSONParser.maxDepth {
            throw fail("nesting deeper than \(JSONParser.maxDepth)")
        }
        index += 1  // [
        skipWhitespace()
        var elements: [JSONValue] = []
        if index < bytes.count && bytes[index] == Byte.closeBracket {
            index += 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw unexpected("',' or ']'") }
            switch bytes[index] {
            case Byte.comma:
                index += 1
                skipWhitespace()
                if index < bytes.count && bytes[index] == Byte.closeBracket {
                    throw fail("trailing comma in array")
                }
            case Byte.closeBracket:
                index += 1
                return .array(elements)
            default:
                throw unexpected("',' or ']'")
            }
        }
    }

    @inline(__always)
    func isDigit(_ offset: Int) -> Bool {
        offset < bytes.count && bytes[offset] >= Byte.zero && bytes[offset] <= Byte.nine
    }

    mutating func parseNumber() throws(JSONError) -> String {
        let start = index
        if bytes[index] == Byte.minus {
            index += 1
        }
        guard isDigit(index) else { throw fail("expected a digit") }
        if bytes[index] == Byte.zero {
            index += 1
            if isDigit(index) { throw fail("leading zeros are not allowed", at: index - 1) }
        } else {
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count && bytes[index] == Byte.dot {
            index += 1
            guard isDigit(index) else { throw fail("expected a digit after the decimal point") }
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count && (bytes[index] | 0x20) == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count && (bytes[index] == Byte.plus || bytes[index] == Byte.minus) {
                index += 1
            }
            guard isDigit(index) else { throw fail("expected a digit in the exponent") }
            while isDigit(index) { index += 1 }
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    /// Parses a string starting at its opening quote.
    ///
    /// The fast path finds the closing quote with no escape in between and
    /// makes the `String` straight from the input; an escape switches to a
    /// copy into a scratch buffer.
    mutating func parseString() throws(JSONError) -> String {
        index += 1  // "
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == Byte.quote {
                let text = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return String(decoding: text, as: UTF8.self)
            }
            if byte == Byte.backslash {
                return try parseEscapedString(from: start)
            }
            if byte < 0x20 {
                throw fail("unescaped control character in string")
            }
            if byte < 0x80 {
                index += 1
            } else {
                index += try utf8SequenceLength(at: index)
            }
        }
        throw fail("unterminated string", at: start - 1)
    }

    /// The slow path of ``parseString()``: `index` is at the first backslash.
    mutating func parseEscapedString(from start: Int) throws(JSONError) -> String {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(index - start + 16)
        buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case Byte.quote:
                index += 1
                return String(decoding: buffer, as: UTF8.self)
            case Byte.backslash:
                try parseEscape(into: &buffer)
            case 0..<0x20:
                throw fail("unescaped control character in string")
            case 0x20..<0x80:
                buffer.append(byte)
                index += 1
            default:
                let length = try utf8SequenceLength(at: index)
                buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<index + length]))
                index += length
            }
        }
        throw fail("unterminated string", at: start - 1)
    }

    /// Decodes one escape at `index` (the backslash) and appends its UTF-8.
    mutating func parseEscape(into buffer: inout [UInt8]) throws(JSONError) {
        let escapeStart = index
        index += 1
        guard index < bytes.count else { throw fail("unterminated string") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case Byte.quote: buffer.append(Byte.quote)
        case Byte.backslash: buffer.append(Byte.backslash)
        case Byte.slash: buffer.append(Byte.slash)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                guard index + 1 < bytes.count, bytes[index] == Byte.backslash, bytes[index + 1] == UInt8(ascii: "u")
                else {
                    throw fail("lone high surrogate in \\u escape", at: escapeStart)
                }
                index += 2
                let low = try hex4()
                guard low >= 0xDC00 && low <= 0xDFFF else {
                    throw fail("high surrogate not followed by a low surrogate", at: escapeStart)
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                throw fail("lone low surrogate in \\u escape", at: escapeStart)
            }
            appendUTF8(scalar, to: &buffer)
        default:
            throw fail("invalid escape \\\(Character(Unicode.Scalar(byte)))", at: escapeStart)
        }
    }

    mutating func hex4() throws(JSONError) -> UInt32 {
        try JSONLexing.hex4(bytes, index: &index)
    }

    func appendUTF8(_ scalar: UInt32, to buffer: inout [UInt8]) {
        JSONLexing.appendUTF8(scalar, to: &buffer)
    }

    /// The length of the well-formed UTF-8 sequence whose lead byte (≥ 0x80)
    /// is at `offset` (RFC 3629, Table 3-7 of the Unicode standard).
    func utf8SequenceLength(at offset: Int) throws(JSONError) -> Int {
        try JSONLexing.utf8SequenceLength(bytes, at: offset)
    }
}
