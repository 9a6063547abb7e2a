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
    /// The text written so far (a copy when room is left over; ``takeBytes()`` copies nothing).
    public var bytes: [UInt8] { length == storage.count ? storage : Array(storage[..<length]) }
    /// The text, then room not yet written: each write checks the room once and copies its
    /// bytes in. (`Array.append` checked the array's uniqueness for every byte, and its
    /// `append(contentsOf:)` cost about 90 instructions a call: most of the reducer's writing.)
    private var storage: [UInt8]
    /// How much of ``storage`` is text.
    private var length = 0
    /// Whether the next value or key must be preceded by a comma.
    private var needsComma = false
    /// Whether a key was just written, so the next value follows its colon.
    private var afterKey = false

    /// Creates an empty writer.
    ///
    /// - Parameter capacity: bytes to reserve up front.
    public init(capacity: Int = 256) {
        storage = ZeroedBytes.array(count: Swift.max(capacity, 16))
    }

    /// Hands over the text written, without copying it, and leaves the writer empty.
    public mutating func takeBytes() -> [UInt8] {
        var text: [UInt8] = []
        swap(&text, &storage)
        text.removeSubrange(length...)
        length = 0
        needsComma = false
        afterKey = false
        return text
    }

    /// Makes room for `count` more bytes and lends `body` where they go.
    @inline(__always)
    private mutating func write(_ count: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Void) {
        if length + count > storage.count { grow(to: length + count) }
        let start = length
        storage.withUnsafeMutableBufferPointer { body($0.baseAddress! + start) }
        length += count
    }

    private mutating func grow(to needed: Int) {
        var larger = ZeroedBytes.array(count: Swift.max(needed, 2 * storage.count))
        let written = length
        if written > 0 {
            larger.withUnsafeMutableBufferPointer { larger in
                storage.withUnsafeBufferPointer { larger.baseAddress!.update(from: $0.baseAddress!, count: written) }
            }
        }
        storage = larger
    }

    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        write(1) { $0.pointee = byte }
    }

    @inline(__always)
    private mutating func put(contentsOf source: UnsafeRawBufferPointer) {
        guard let base = source.baseAddress, !source.isEmpty else { return }
        write(source.count) { UnsafeMutableRawPointer($0).copyMemory(from: base, byteCount: source.count) }
    }

    @inline(__always)
    private mutating func put(contentsOf source: UnsafeBufferPointer<UInt8>) {
        put(contentsOf: UnsafeRawBufferPointer(source))
    }

    @inline(__always)
    private mutating func put(contentsOf source: [UInt8]) {
        source.withUnsafeBytes { put(contentsOf: $0) }
    }

    private mutating func put(contentsOf source: some Collection<UInt8>) {
        if source.withContiguousStorageIfAvailable({ put(contentsOf: $0) }) == nil {
            put(contentsOf: Array(source))
        }
    }

    @inline(__always)
    private mutating func beginValue() {
        if afterKey {
            afterKey = false
        } else if needsComma {
            put(UInt8(ascii: ","))
        }
    }

    /// Opens an object: `{`.
    public mutating func beginObject() {
        beginValue()
        put(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Closes the innermost object: `}`.
    public mutating func endObject() {
        put(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Opens an array: `[`.
    public mutating func beginArray() {
        beginValue()
        put(UInt8(ascii: "["))
        needsComma = false
    }

    /// Closes the innermost array: `]`.
    public mutating func endArray() {
        put(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes an object member's key and its colon; the member's value comes next.
    public mutating func key(_ name: String) {
        if needsComma {
            put(UInt8(ascii: ","))
        }
        appendEscaped(name)
        put(UInt8(ascii: ":"))
        needsComma = false
        afterKey = true
    }

    /// Writes an object member's key that needs no escaping (a literal of
    /// ASCII letters, digits and `_`, say) and its colon: what ``key(_:)``
    /// writes, without looking at each byte.
    public mutating func key(plain name: StaticString) {
        // `,"name":` in one write.
        let comma = needsComma ? 1 : 0
        name.withUTF8Buffer { name in
            write(comma + name.count + 3) { out in
                out[0] = UInt8(ascii: ",")
                out[comma] = UInt8(ascii: "\"")
                if let base = name.baseAddress { (out + comma + 1).update(from: base, count: name.count) }
                out[comma + name.count + 1] = UInt8(ascii: "\"")
                out[comma + name.count + 2] = UInt8(ascii: ":")
            }
        }
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
            put(UInt8(ascii: "-"))
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
            put(contentsOf: [0x74, 0x72, 0x75, 0x65])  // true
        } else {
            put(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])  // false
        }
        needsComma = true
    }

    /// Writes `null`.
    public mutating func null() {
        beginValue()
        put(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])  // null
        needsComma = true
    }

    /// Writes a value given as JSON text, unchanged (a number's text, or an
    /// event already encoded). The caller vouches that it is one JSON value.
    public mutating func raw(_ jsonBytes: some Collection<UInt8>) {
        beginValue()
        put(contentsOf: jsonBytes)
        needsComma = true
    }

    /// Writes a value given as JSON text, unchanged; as the generic `raw(_:)` does.
    /// (The array's bytes are copied in one go, with no generic iteration.)
    public mutating func raw(_ jsonBytes: [UInt8]) {
        beginValue()
        put(contentsOf: jsonBytes)
        needsComma = true
    }

    /// Writes a value given as JSON text in memory the caller holds, unchanged; as `raw(_:)` does,
    /// with no generic iteration across modules.
    public mutating func raw(_ jsonBytes: UnsafeRawBufferPointer) {
        beginValue()
        put(contentsOf: jsonBytes)
        needsComma = true
    }

    /// Appends prepared JSON text inside an open object, after which a member
    /// follows (a key gets its comma): such as an envelope's fixed start, written
    /// once and reused. The caller vouches for the text.
    package mutating func fragment(_ json: some Collection<UInt8>) {
        put(contentsOf: json)
        needsComma = true
        afterKey = false
    }

    /// Appends prepared JSON text held in an array; as the generic `fragment(_:)` does.
    package mutating func fragment(_ json: [UInt8]) {
        put(contentsOf: json)
        needsComma = true
        afterKey = false
    }

    /// Appends one prepared byte (a separator); as the generic `fragment(_:)` does.
    package mutating func fragment(byte: UInt8) {
        put(byte)
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
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        write(digits) { out in
            var rest = value
            for position in stride(from: digits - 1, through: 0, by: -1) {
                out[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            }
        }
    }

    private mutating func appendEscaped(_ text: String) {
        // A native string's bytes are read where they are; `var copy = text; copy.withUTF8`
        // retained and released the string's storage for every string written.
        if text.utf8.withContiguousStorageIfAvailable({ appendQuoted($0) }) == nil {
            var copy = text
            copy.withUTF8 { appendQuoted($0) }
        }
    }

    /// Appends `utf8` as a JSON string: in one write, quotes and all, when nothing in it
    /// needs escaping (ids, cids, times: nearly every string the plugins write).
    private mutating func appendQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        let raw = UnsafeRawBufferPointer(utf8)
        var escape = Self.firstEscape(in: raw, from: 0)
        guard escape < raw.count else {
            write(raw.count + 2) { out in
                out[0] = UInt8(ascii: "\"")
                if let base = utf8.baseAddress { (out + 1).update(from: base, count: utf8.count) }
                out[utf8.count + 1] = UInt8(ascii: "\"")
            }
            return
        }
        // Runs that need nothing copied as they are, each escape written in between.
        put(UInt8(ascii: "\""))
        var runStart = 0
        while escape < raw.count {
            put(contentsOf: UnsafeRawBufferPointer(rebasing: raw[runStart..<escape]))
            let byte = raw[escape]
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                write(2) { out in
                    out[0] = UInt8(ascii: "\\")
                    out[1] = byte
                }
            default:
                write(6) { out in
                    for (offset, letter) in "\\u00".utf8.enumerated() { out[offset] = letter }
                    out[4] = Self.hexDigits[Int(byte >> 4)]
                    out[5] = Self.hexDigits[Int(byte & 0xF)]
                }
            }
            runStart = escape + 1
            escape = Self.firstEscape(in: raw, from: runStart)
        }
        put(contentsOf: UnsafeRawBufferPointer(rebasing: raw[runStart...]))
        put(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The offset of the first byte of `raw` from `start` on that JSON requires escaped (`"`, `\`,
    /// below 0x20), or its count when there is none: eight bytes at a time past plain ones
    /// (a word is looked at byte by byte only when it holds such a byte, or one of 0x80 or more).
    @inline(__always)
    private static func firstEscape(in raw: UnsafeRawBufferPointer, from start: Int) -> Int {
        var index = start
        while index + 8 <= raw.count {
            if JSONLexing.specialBytes(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) != 0 {
                for offset in index..<index + 8 where needsEscape(raw[offset]) { return offset }
            }
            index += 8
        }
        while index < raw.count {
            if needsEscape(raw[index]) { return index }
            index += 1
        }
        return raw.count
    }

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}
