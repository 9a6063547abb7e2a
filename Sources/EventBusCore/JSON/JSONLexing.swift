/// Lexical pieces shared by ``JSONParser`` and ``JSONScanner``, so that both
/// accept the same text and report the same errors at the same offsets.
enum JSONLexing {
    /// The high bit set in each of the eight bytes (little-endian) that is `"`, `\`, below 0x20 or at
    /// least 0x80; zero when there is none. Bytes above the first flagged one may be flagged wrongly.
    @inline(__always)
    static func specialBytes(_ word: UInt64) -> UInt64 {
        let controls = (word &- WordBytes.ones &* 0x20) & ~word
        let quotes = WordBytes.matchingUnmasked(0x22, in: word), backslashes = WordBytes.matchingUnmasked(0x5C, in: word)
        return (controls | quotes | backslashes | word) & WordBytes.highs
    }

    /// Reads the four hex digits of a `\u` escape starting at `index`, moving past them.
    @inline(__always)
    static func hex4(_ bytes: UnsafeRawBufferPointer, index: inout Int) throws(JSONError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw JSONError(offset: index, message: "incomplete \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONError(offset: index, message: "invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// The length of the well-formed UTF-8 sequence whose lead byte (≥ 0x80)
    /// is at `offset` (RFC 3629, Table 3-7 of the Unicode standard).
    static func utf8SequenceLength(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(JSONError) -> Int {
        let lead = bytes[offset]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default:
            throw JSONError(offset: offset, message: "invalid UTF-8 lead byte 0x\(String(lead, radix: 16, uppercase: true))")
        }
        guard offset + length <= bytes.count else {
            throw JSONError(offset: offset, message: "truncated UTF-8 sequence")
        }
        let second = bytes[offset + 1]
        guard second >= low && second <= high else {
            throw JSONError(offset: offset + 1, message: "invalid UTF-8 continuation byte")
        }
        var next = offset + 2
        while next < offset + length {
            guard bytes[next] & 0xC0 == 0x80 else {
                throw JSONError(offset: next, message: "invalid UTF-8 continuation byte")
            }
            next += 1
        }
        return length
    }

    /// Appends `scalar` encoded as UTF-8.
    static func appendUTF8(_ scalar: UInt32, to buffer: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            buffer.append(UInt8(scalar))
        case 0x80..<0x800:
            buffer.append(UInt8(0xC0 | scalar >> 6))
            buffer.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            buffer.append(UInt8(0xE0 | scalar >> 12))
            buffer.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            buffer.append(UInt8(0x80 | scalar & 0x3F))
        default:
            buffer.append(UInt8(0xF0 | scalar >> 18))
            buffer.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            buffer.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            buffer.append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}
