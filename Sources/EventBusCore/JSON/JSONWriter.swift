/// Writes JSON text straight into a byte array, with no intermediate values.
///
/// The writer puts the commas and colons in; the caller keeps the structure
/// well formed (a ``key(_:)`` before every value inside an object, every
/// `begin` matched by its `end`). Strings are escaped as RFC 8259 requires:
/// `"` and `\` with a backslash, control characters below U+0020 as `\u00XX`;
/// everything else, `/` and non-ASCII included, is written as is.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.key("cid"); writer.string("messaging:general")
/// writer.key("unread"); writer.int(3)
/// writer.endObject()
/// // writer.bytes == Array(#"{"cid":"messaging:general","unread":3}"#.utf8)
/// ```
public struct JSONWriter: Sendable {
    /// The text written so far.
    public private(set) var bytes: [UInt8]
    /// Whether the next value or key must be preceded by a comma.
    private var needsComma = false
    /// Whether a key was just written, so the next value follows its colon.
    private var afterKey = false

    /// Creates an empty writer.
    ///
    /// - Parameter capacity: bytes to reserve up front.
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inline(__always)
    private mutating func beginValue() {
        if afterKey {
            afterKey = false
        } else if needsComma {
            bytes.append(UInt8(ascii: ","))
        }
    }

    /// Opens an object: `{`.
    public mutating func beginObject() {
        beginValue()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Closes the innermost object: `}`.
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Opens an array: `[`.
    public mutating func beginArray() {
        beginValue()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// Closes the innermost array: `]`.
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes an object member's key and its colon; the member's value comes next.
    public mutating func key(_ name: String) {
        if needsComma {
            bytes.append(UInt8(ascii: ","))
        }
        appendEscaped(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
        afterKey = true
    }

    /// Writes an object member's key that needs no escaping (a literal of
    /// ASCII letters, digits and `_`, say) and its colon: what ``key(_:)``
    /// writes, without looking at each byte.
    public mutating func key(plain name: StaticString) {
        if needsComma {
            bytes.append(UInt8(ascii: ","))
        }
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
        afterKey = true
    }

    /// Writes a string value, escaped.
    public mutating func string(_ value: String) {
        beginValue()
        appendEscaped(value)
        needsComma = true
    }

    /// Writes `value` as a string value, or `null` when there is none.
    public mutating func string(orNull value: String?) {
        if let value { string(value) } else { null() }
    }

    /// Writes a signed integer value.
    public mutating func int(_ value: Int64) {
        beginValue()
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
        }
        appendDecimal(value.magnitude)
        needsComma = true
    }

    /// Writes a signed integer value.
    public mutating func int(_ value: Int) {
        int(Int64(value))
    }

    /// Writes an unsigned integer value.
    public mutating func uint(_ value: UInt64) {
        beginValue()
        appendDecimal(value)
        needsComma = true
    }

    /// Writes `value` as an unsigned integer value, or `null` when there is none.
    public mutating func uint(orNull value: UInt64?) {
        if let value { uint(value) } else { null() }
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        beginValue()
        if value {
            bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65])  // true
        } else {
            bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])  // false
        }
        needsComma = true
    }

    /// Writes `null`.
    public mutating func null() {
        beginValue()
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])  // null
        needsComma = true
    }

    /// Writes a value given as JSON text, unchanged (a number's text, or an
    /// event already encoded). The caller vouches that it is one JSON value.
    public mutating func raw(_ jsonBytes: some Collection<UInt8>) {
        beginValue()
        bytes.append(contentsOf: jsonBytes)
        needsComma = true
    }

    /// Writes a value given as JSON text, unchanged; as the generic `raw(_:)` does.
    /// (The array's bytes are copied in one go, with no generic iteration.)
    public mutating func raw(_ jsonBytes: [UInt8]) {
        beginValue()
        bytes.append(contentsOf: jsonBytes)
        needsComma = true
    }

    /// Writes a value given as JSON text in memory the caller holds, unchanged; as `raw(_:)` does,
    /// with no generic iteration across modules.
    public mutating func raw(_ jsonBytes: UnsafeRawBufferPointer) {
        beginValue()
        bytes.append(contentsOf: jsonBytes)
        needsComma = true
    }

    /// Appends prepared JSON text inside an open object, after which a member
    /// follows (a key gets its comma): such as an envelope's fixed start, written
    /// once and reused. The caller vouches for the text.
    package mutating func fragment(_ json: some Collection<UInt8>) {
        bytes.append(contentsOf: json)
        needsComma = true
        afterKey = false
    }

    /// Appends prepared JSON text held in an array; as the generic `fragment(_:)` does.
    package mutating func fragment(_ json: [UInt8]) {
        bytes.append(contentsOf: json)
        needsComma = true
        afterKey = false
    }

    /// Appends one prepared byte (a separator); as the generic `fragment(_:)` does.
    package mutating func fragment(byte: UInt8) {
        bytes.append(byte)
        needsComma = true
        afterKey = false
    }

    /// Appends `value` in decimal inside a fragment (an id's digits, say); see ``fragment(_:)``.
    package mutating func fragment(decimal value: UInt64) {
        appendDecimal(value)
        needsComma = true
        afterKey = false
    }

    private mutating func appendDecimal(_ value: UInt64) {
        if value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var digits: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                     UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { raw in
            let slots = raw.bindMemory(to: UInt64.self)
            while rest > 0 {
                slots[count] = rest % 10
                rest /= 10
                count += 1
            }
            while count > 0 {
                count -= 1
                bytes.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: slots[count]))
            }
        }
    }

    private mutating func appendEscaped(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        // A native string's bytes are read where they are; `var copy = text; copy.withUTF8`
        // retained and released the string's storage for every string written.
        if text.utf8.withContiguousStorageIfAvailable({ appendEscapedContent($0) }) == nil {
            var copy = text
            copy.withUTF8 { appendEscapedContent($0) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `utf8`, a string's bytes, with what JSON requires escaped (no quotes around).
    private mutating func appendEscapedContent(_ utf8: UnsafeBufferPointer<UInt8>) {
        let raw = UnsafeRawBufferPointer(utf8)
        var runStart = 0
        var index = 0
        while index < utf8.count {
            // Eight bytes at a time past those that need no escape (most text).
            if index + 8 <= utf8.count && JSONLexing.specialBytes(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) == 0 {
                index += 8
                continue
            }
            let byte = utf8[index]
            index += 1
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            let at = index - 1
            if runStart < at {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<at]))
            }
            runStart = index
            bytes.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                bytes.append(byte)
            default:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                          hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            }
        }
        if runStart < utf8.count {
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
    }
}
