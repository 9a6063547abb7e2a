import CJSONBits

/// A validating JSON scanner that builds no values.
///
/// It accepts exactly what ``JSONParser`` accepts — the same grammar, the same
/// UTF-8 checks inside strings, the same escape and surrogate rules, the same
/// depth limit, no trailing bytes, and no repeated key in any object (keys
/// compared as decoded `String`s, like the parser) — and fails with the same
/// ``JSONError`` (offset and message). Instead of a ``JSONValue`` it reports,
/// for a top-level object, where the values of the members named in a
/// ``Keys`` set lie in the input and what kind they are. A string is decoded
/// only when asked, with ``string(_:in:)``.
///
/// Input of printable ASCII without a backslash (an event as the SDKs write it) is first
/// marked, sixteen bytes at a time, where its quotes are (`eventbus_json_quote_bits`): each
/// string then ends at its next quote, with no byte of it looked at again; other input is
/// scanned byte by byte. Both ways give the same outcome, errors included.
///
/// A scan allocates nothing on the heap for typical input. A key asked for
/// (in the ``Keys`` set of its object) is a repeat when its member was found
/// already; the other keys are remembered as byte ranges in a stack buffer, so
/// a repeated one is found by comparing bytes. It falls back to decoded
/// `String`s only for an object with such a key that has an escape or a
/// non-ASCII byte, or with more than 15 of them, and to a heap buffer when more
/// than 64 are open at once.
package enum JSONScanner {
    /// The kind of a JSON value.
    package enum Kind: UInt8, Sendable, Equatable {
        /// `null`.
        case null
        /// `true` or `false`.
        case bool
        /// A number.
        case number
        /// A string.
        case string
        /// An array.
        case array
        /// An object.
        case object
    }

    /// Where a member's value lies in the scanned input, and its kind.
    package struct Span: Sendable, Equatable {
        /// The value's kind.
        package var kind: Kind
        /// The value's bytes in the input; a string's include its quotes.
        package var range: Range<Int>
        /// For a string, whether it holds a backslash escape (so that its text differs from its bytes).
        package var hasEscapes: Bool

        /// Creates a span.
        package init(kind: Kind, range: Range<Int>, hasEscapes: Bool = false) {
            self.kind = kind
            self.range = range
            self.hasEscapes = hasEscapes
        }
    }

    /// The names of the top-level members a scan looks for: at most ``maxCount``.
    ///
    /// Make one once (a `static let`) and reuse it.
    package struct Keys: Sendable {
        /// The most names a set can hold.
        package static let maxCount = 8

        /// The names and their table, which a scan reads by pointer: it retains and releases nothing.
        final class Storage: @unchecked Sendable {
            let names: [String]
            /// ``Keys/header`` words (a hash's multiplier and its 64 buckets), then per name its
            /// length in UTF-8 bytes and its first 16 bytes as two little-endian words, zero-padded.
            /// Allocated once and never written after `init`.
            let table: UnsafeBufferPointer<UInt64>

            init(names: [String], table: [UInt64]) {
                self.names = names
                let memory = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: table.count)
                _ = memory.initialize(from: table)
                self.table = UnsafeBufferPointer(memory)
            }

            deinit { table.deallocate() }

            /// The position of the member with this decoded key (compared as `String`s, as the parser does), or -1.
            func index(ofDecoded key: String) -> Int {
                for position in 0..<names.count where names[position] == key {
                    return position
                }
                return -1
            }
        }

        let storage: Storage

        /// The names, in order; a name's position is its index in ``Members``.
        package var names: [String] { storage.names }

        /// The words before the names in a set's table: the multiplier of a hash that puts each
        /// name (its length and first word) in a bucket of its own, or 0 when none was found (two
        /// names alike in both: they are then tried in turn); then 64 buckets of a byte each,
        /// the position + 1 of the name in it, or 0. So a key is compared with one name, not all.
        static let header = 9

        /// Creates a set of names; at most ``maxCount`` are used.
        package init(_ names: [String]) {
            let used = Array(names.prefix(Self.maxCount))
            var entries: [UInt64] = []
            for name in used {
                let bytes = Array(name.utf8)
                entries.append(UInt64(bytes.count))
                entries.append(Self.word(bytes.prefix(8)))
                entries.append(Self.word(bytes.dropFirst(8).prefix(8)))
            }
            var multiplier: UInt64 = 0
            var buckets = [UInt8](repeating: 0, count: 64)
            var candidate: UInt64 = 0x9E37_79B9_7F4A_7C15
            for _ in 0..<1_000 {
                var trial = [UInt8](repeating: 0, count: 64)
                var clash = false
                for position in used.indices {
                    let bucket = Self.bucket(length: entries[3 * position], first: entries[3 * position + 1],
                                             multiplier: candidate)
                    if trial[bucket] != 0 {
                        clash = true
                        break
                    }
                    trial[bucket] = UInt8(position + 1)
                }
                if !clash {
                    multiplier = candidate
                    buckets = trial
                    break
                }
                candidate = (candidate &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407) | 1
            }
            var table = [multiplier]
            for start in stride(from: 0, to: 64, by: 8) {
                table.append(Self.word(buckets[start..<start + 8]))
            }
            storage = Storage(names: used, table: table + entries)
        }

        /// The bucket of a name or key of `length` bytes whose first word is `first`.
        @inline(__always)
        static func bucket(length: UInt64, first: UInt64, multiplier: UInt64) -> Int {
            Int(truncatingIfNeeded: ((first ^ length) &* multiplier) >> 58)
        }

        private static func word(_ bytes: ArraySlice<UInt8>) -> UInt64 {
            var word: UInt64 = 0
            for (shift, byte) in bytes.enumerated() { word |= UInt64(byte) << (8 * UInt64(shift)) }
            return word
        }

        /// The position of the member whose key has these raw bytes (no escape, ASCII only), or -1.
        ///
        /// - Parameters:
        ///   - table: The set's table.
        ///   - keys: The set's storage, read only for a name longer than 16 bytes (unowned: the
        ///     scanner holds no counted reference, so a scan retains and releases nothing for it).
        @inline(__always)
        static func index(ofRaw key: UnsafeRawBufferPointer, table: UnsafeBufferPointer<UInt64>, keys: Unmanaged<Storage>) -> Int {
            let length = key.count
            let first = word(key, from: 0, count: min(length, 8))
            let second = length > 8 ? word(key, from: 8, count: min(length - 8, 8)) : 0
            let multiplier = table[0]
            if multiplier != 0 {
                // The one name that can be equal: the one in the key's bucket, if any.
                let bucket = bucket(length: UInt64(length), first: first, multiplier: multiplier)
                let position = Int(UnsafeRawPointer(table.baseAddress! + 1).load(fromByteOffset: bucket, as: UInt8.self)) - 1
                guard position >= 0 else { return -1 }
                let slot = header + 3 * position
                guard table[slot] == UInt64(length) && table[slot + 1] == first && table[slot + 2] == second else {
                    return -1
                }
                return length <= 16 || keys.takeUnretainedValue().names[position].utf8.elementsEqual(key) ? position : -1
            }
            var slot = header
            while slot < table.count {
                if table[slot] == UInt64(length) && table[slot + 1] == first && table[slot + 2] == second {
                    let position = (slot - header) / 3
                    // Names longer than 16 bytes: the rest compared as bytes.
                    // (Rare: the set taken back as a reference, counted, only here.)
                    if length <= 16 || keys.takeUnretainedValue().names[position].utf8.elementsEqual(key) {
                        return position
                    }
                }
                slot += 3
            }
            return -1
        }

        /// `count` (at most 8) bytes of `key` from `start` as a little-endian word, zero-padded: by
        /// loads of 8, or of 4, 2 and 1, never byte by byte (the keys of every scanned object come here).
        @inline(__always)
        static func word(_ key: UnsafeRawBufferPointer, from start: Int, count: Int) -> UInt64 {
            if count >= 8 { return UInt64(littleEndian: key.loadUnaligned(fromByteOffset: start, as: UInt64.self)) }
            var word: UInt64 = 0
            var offset = 0
            if count & 4 != 0 {
                word = UInt64(UInt32(littleEndian: key.loadUnaligned(fromByteOffset: start, as: UInt32.self)))
                offset = 4
            }
            if count & 2 != 0 {
                let pair = UInt64(UInt16(littleEndian: key.loadUnaligned(fromByteOffset: start + offset, as: UInt16.self)))
                word |= pair << (8 * UInt64(offset))
                offset += 2
            }
            if count & 1 != 0 {
                word |= UInt64(key.load(fromByteOffset: start + offset, as: UInt8.self)) << (8 * UInt64(offset))
            }
            return word
        }

    }

    /// The result of a scan: the root's kind and, when it is an object, the spans of the requested members.
    package struct Members: Sendable, Equatable {
        /// The kind of the top-level value.
        public internal(set) var root: Kind
        var s0, s1, s2, s3, s4, s5, s6, s7: Span?

        init(root: Kind) {
            self.root = root
        }

        /// The span of the member named `Keys.names[position]`, if the root is an object that has it.
        package subscript(position: Int) -> Span? {
            get {
                switch position {
                case 0: s0
                case 1: s1
                case 2: s2
                case 3: s3
                case 4: s4
                case 5: s5
                case 6: s6
                case 7: s7
                default: nil
                }
            }
            set {
                switch position {
                case 0: s0 = newValue
                case 1: s1 = newValue
                case 2: s2 = newValue
                case 3: s3 = newValue
                case 4: s4 = newValue
                case 5: s5 = newValue
                case 6: s6 = newValue
                case 7: s7 = newValue
                default: break
                }
            }
        }
    }

    private static let noKeys = Keys([])

    /// Checks that `bytes` is one JSON text, exactly as ``JSONParser/parse(_:)-(UnsafeRawBufferPointer)`` would.
    ///
    /// - Returns: the kind of the top-level value.
    /// - Throws: the ``JSONError`` the parser would throw.
    @discardableResult
    package static func validate(_ bytes: UnsafeRawBufferPointer) throws(JSONError) -> Kind {
        try scan(bytes, members: noKeys).root
    }

    /// Checks that `bytes` is one JSON text and finds the top-level members named in `keys`.
    ///
    /// - Returns: the root's kind and, if it is an object, the spans of the members it has.
    /// - Throws: the ``JSONError`` the parser would throw.
    package static func scan(_ bytes: UnsafeRawBufferPointer, members keys: Keys) throws(JSONError) -> Members {
        try scan(bytes, members: keys, stackKeys: stackKeys)
    }

    /// The keys the stack buffer holds before a scan starts again with a heap buffer.
    static let stackKeys = 64

    /// ``scan(_:members:)`` with a stack buffer for `stackKeys` keys: tests make it small, so that
    /// the heap fallback runs on ordinary input, or turn the fallback off to see where it is needed
    /// (the scan then fails with offset -1 instead); or scan plain input byte by byte (`markQuotes`
    /// false), to compare.
    static func scan(
        _ bytes: UnsafeRawBufferPointer, members keys: Keys, stackKeys: Int, heapFallback: Bool = true,
        markQuotes: Bool = true
    ) throws(JSONError) -> Members {
        var members = Members(root: .null)
        let failure = withUnsafeMutablePointer(to: &members) { members in
            scan(bytes, keys: keys, members: members, nested: nil, of: -1, found: nil, stackKeys: stackKeys,
                 heapFallback: heapFallback, markQuotes: markQuotes)
        }
        if let failure { throw failure }
        return members
    }

    /// Checks that `bytes` is one JSON text and finds the top-level members named in `keys` and, in
    /// the same pass, the members named in `nested` of the object that is the value of the top-level
    /// member `keys.names[parent]` — an event's envelope and its `data`, say, read in one scan.
    ///
    /// - Parameters:
    ///   - members: Set to the top-level spans, as ``scan(_:members:)`` returns them.
    ///   - found: Set to the nested object's: its `root` is ``Kind/object`` when that member is present
    ///     and an object (`.null` otherwise), and its spans are offsets in `bytes`, like the top-level ones.
    /// - Throws: the ``JSONError`` the parser would throw.
    static func scan(
        _ bytes: UnsafeRawBufferPointer, members keys: Keys, into members: inout Members,
        nested: Keys, of parent: Int, into found: inout Members
    ) throws(JSONError) {
        let failure = withUnsafeMutablePointer(to: &members) { members in
            withUnsafeMutablePointer(to: &found) { found in
                scan(bytes, keys: keys, members: members, nested: nested, of: parent, found: found, stackKeys: stackKeys)
            }
        }
        if let failure { throw failure }
    }

    /// The longest input whose quotes are marked first: its bitmap (a word per 64 bytes) fits
    /// in the 1 KiB the standard library puts on the stack.
    static let quoteBitsLimit = 8_192

    /// Both scans: once with a key stack on the stack and, if more than `stackKeys` keys were open
    /// at once, again with room for every key the input can hold (each takes at least 4 bytes:
    /// `"":0`). The error, if any, is returned rather than thrown, so that it crosses closures.
    ///
    /// Plain input (see ``JSONScanner``) is scanned with its quotes marked. Its errors need no
    /// second scan: in plain input the byte-by-byte string scan stops at the same next quote
    /// (or fails as unterminated at the same offset), so both scans agree on every outcome.
    private static func scan(
        _ bytes: UnsafeRawBufferPointer, keys: Keys, members: UnsafeMutablePointer<Members>,
        nested: Keys?, of parent: Int, found: UnsafeMutablePointer<Members>?, stackKeys: Int, heapFallback: Bool = true,
        markQuotes: Bool = true
    ) -> JSONError? {
        // (An empty input has no address to mark; it fails at once anyway.)
        guard markQuotes, let base = bytes.baseAddress, !bytes.isEmpty, bytes.count <= quoteBitsLimit else {
            return scan(bytes, keys: keys, members: members, nested: nested, of: parent, found: found,
                        stackKeys: stackKeys, heapFallback: heapFallback, quotes: nil)
        }
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: (bytes.count + 63) / 64) { bits in
            let plain = eventbus_json_quote_bits(base.assumingMemoryBound(to: UInt8.self), bytes.count, bits.baseAddress!) != 0
            return scan(bytes, keys: keys, members: members, nested: nested, of: parent, found: found,
                        stackKeys: stackKeys, heapFallback: heapFallback, quotes: plain ? UnsafeBufferPointer(bits) : nil)
        }
    }

    /// ``scan(_:keys:members:nested:of:found:stackKeys:heapFallback:)`` with the quotes marked in
    /// `quotes` (plain input only), or none.
    private static func scan(
        _ bytes: UnsafeRawBufferPointer, keys: Keys, members: UnsafeMutablePointer<Members>,
        nested: Keys?, of parent: Int, found: UnsafeMutablePointer<Members>?, stackKeys: Int, heapFallback: Bool,
        quotes: UnsafeBufferPointer<UInt64>?
    ) -> JSONError? {
        // The sets' storage unmanaged and their tables by pointer (the sets outlive the scan, which
        // the caller holds them for): the scanner holds no reference to count.
        let storage = Unmanaged.passUnretained(keys.storage), table = keys.storage.table
        var capture: NestedCapture?
        if let nested, let found {
            capture = NestedCapture(parent: parent, keys: Unmanaged.passUnretained(nested.storage),
                                    table: nested.storage.table, members: found)
        }
        func attempt(_ keyStack: UnsafeMutableBufferPointer<Int>) -> JSONError? {
            members.pointee = Members(root: .null)
            found?.pointee = Members(root: .null)
            return run(bytes, keys: storage, table: table, members: members, nested: capture, keyStack: keyStack,
                       quotes: quotes)
        }
        // 1 KiB: the most the standard library always puts on the stack. Above that it asks the
        // runtime, which here answered with a heap allocation and a free for every scan.
        let failure = withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * stackKeys) { attempt($0) }
        guard let failure, failure.offset == Scanner.overflowOffset, heapFallback else { return failure }
        let heap = UnsafeMutableBufferPointer<Int>.allocate(capacity: 2 * (bytes.count / 4 + 2))
        defer { heap.deallocate() }
        return attempt(heap)
    }

    /// Scans; the error, if any, is returned rather than thrown, so that it crosses the closures above.
    private static func run(
        _ bytes: UnsafeRawBufferPointer, keys: Unmanaged<Keys.Storage>, table: UnsafeBufferPointer<UInt64>,
        members: UnsafeMutablePointer<Members>, nested: NestedCapture?, keyStack: UnsafeMutableBufferPointer<Int>,
        quotes: UnsafeBufferPointer<UInt64>?
    ) -> JSONError? {
        var scanner = Scanner(
            bytes: bytes, keys: keys, keyTable: table, members: members, nested: nested, keyStack: keyStack,
            quotes: quotes)
        do {
            scanner.skipWhitespace()
            let root = try scanner.scanValue(depth: 0)
            scanner.skipWhitespace()
            if scanner.index != bytes.count {
                return JSONError(
                    offset: scanner.index,
                    message: "unexpected \(JSONParser.describe(bytes[scanner.index])) after the value")
            }
            members.pointee.root = root
            return nil
        } catch {
            return error
        }
    }

    /// The text of a string value found by a scan of `bytes`, its escapes decoded.
    ///
    /// - Precondition: `span` is a string's span from a successful scan of these bytes.
    package static func string(_ span: Span, in bytes: UnsafeRawBufferPointer) -> String {
        guard span.hasEscapes else {
            return String(
                decoding: UnsafeRawBufferPointer(rebasing: bytes[span.range.lowerBound + 1..<span.range.upperBound - 1]),
                as: UTF8.self)
        }
        return decode(bytes, from: span.range.lowerBound + 1, to: span.range.upperBound - 1)
    }

    /// Decodes the content of a valid JSON string (between its quotes).
    static func decode(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> String {
        var index = start
        while index < end && bytes[index] != 0x5C { index += 1 }
        if index == end {
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(end - start)
        buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < end {
            let byte = bytes[index]
            guard byte == 0x5C else {
                buffer.append(byte)
                index += 1
                continue
            }
            let escaped = bytes[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "b"): buffer.append(0x08)
            case UInt8(ascii: "f"): buffer.append(0x0C)
            case UInt8(ascii: "n"): buffer.append(0x0A)
            case UInt8(ascii: "r"): buffer.append(0x0D)
            case UInt8(ascii: "t"): buffer.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hexValue(bytes, at: index)
                index += 4
                if scalar >= 0xD800 && scalar <= 0xDBFF {
                    // Validated: a high surrogate is followed by `\u` and a low one.
                    let low = hexValue(bytes, at: index + 2)
                    index += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                appendUTF8(scalar, to: &buffer)
            default: buffer.append(escaped)  // `"`, `\` or `/`
            }
        }
        return String(decoding: buffer, as: UTF8.self)
    }

    private static func hexValue(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        var value: UInt32 = 0
        for index in offset..<offset + 4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: digit = byte - UInt8(ascii: "A") + 10
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private static func appendUTF8(_ scalar: UInt32, to buffer: inout [UInt8]) {
        JSONLexing.appendUTF8(scalar, to: &buffer)
    }
}

/// Where a scan puts what it finds in the object value of one top-level member.
private struct NestedCapture {
    /// The position of that member in the top-level names.
    let parent: Int
    /// The names to find in its object.
    let keys: Unmanaged<JSONScanner.Keys.Storage>
    /// Their table.
    let table: UnsafeBufferPointer<UInt64>
    /// Where their spans go.
    let members: UnsafeMutablePointer<JSONScanner.Members>
}

/// The scanner's cursor. Its checks and messages mirror `JSONParser`'s parser line by line.
private struct Scanner {
    /// The offset of the internal error that means "the key stack is full".
    static let overflowOffset = -1

    let bytes: UnsafeRawBufferPointer
    let count: Int
    var index = 0
    let keys: Unmanaged<JSONScanner.Keys.Storage>
    let keyTable: UnsafeBufferPointer<UInt64>
    let members: UnsafeMutablePointer<JSONScanner.Members>
    /// The members to find in the object value of one top-level member, if asked.
    let nested: NestedCapture?
    /// Whether the object being scanned at depth 2 is that value.
    var inNested = false
    /// The raw content ranges (start, end) of the keys of every open object, innermost last.
    let keyStack: UnsafeMutableBufferPointer<Int>
    var keyTop = 0
    /// The input's quotes, a bit per byte, when every byte is plain (`eventbus_json_quote_bits`).
    let quotes: UnsafeBufferPointer<UInt64>?

    /// Set by ``scanString()``: the string had a backslash escape.
    static let escaped: UInt8 = 1
    /// Set by ``scanString()``: the string had a byte ≥ 0x80.
    static let nonASCII: UInt8 = 2

    init(
        bytes: UnsafeRawBufferPointer, keys: Unmanaged<JSONScanner.Keys.Storage>, keyTable: UnsafeBufferPointer<UInt64>,
        members: UnsafeMutablePointer<JSONScanner.Members>, nested: NestedCapture?,
        keyStack: UnsafeMutableBufferPointer<Int>, quotes: UnsafeBufferPointer<UInt64>?
    ) {
        self.quotes = quotes
        self.bytes = bytes
        self.count = bytes.count
        self.keys = keys
        self.keyTable = keyTable
        self.members = members
        self.nested = nested
        self.keyStack = keyStack
    }

    @inline(__always)
    func fail(_ message: String, at offset: Int? = nil) -> JSONError {
        JSONError(offset: offset ?? index, message: message)
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    func unexpected(_ expected: String) -> JSONError {
        if index >= count {
            return fail("unexpected end of input, expected \(expected)")
        }
        return fail("unexpected \(JSONParser.describe(bytes[index])), expected \(expected)")
    }

    mutating func scanValue(depth: Int) throws(JSONError) -> JSONScanner.Kind {
        guard index < count else { throw unexpected("a value") }
        switch bytes[index] {
        case 0x7B:
            try scanObject(depth: depth + 1)
            return .object
        case 0x5B:
            try scanArray(depth: depth + 1)
            return .array
        case 0x22:
            _ = try scanString()
            return .string
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case 0x2D, 0x30...0x39:
            try scanNumber()
            return .number
        default:
            throw unexpected("a value")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONError) {
        let start = index
        let length = word.utf8CodeUnitCount
        let text = word.utf8Start
        for offset in 0..<length {
            guard index < count, bytes[index] == text[offset] else {
                throw fail("invalid literal, expected \(word)", at: start)
            }
            index += 1
        }
    }

    mutating func scanObject(depth: Int) throws(JSONError) {
        if depth > JSONParser.maxDepth {
            throw fail("nesting deeper than \(JSONParser.maxDepth)")
        }
        index += 1  // {
        skipWhitespace()
        if index < count && bytes[index] == 0x7D {
            index += 1
            return
        }
        let base = keyTop
        defer { keyTop = base }
        // Keys compared as `String`s, once a key is not plain ASCII or the object grows large.
        var seen: Set<String>? = nil
        while true {
            guard index < count, bytes[index] == 0x22 else {
                throw unexpected("a string key")
            }
            let keyOffset = index
            let flags = try scanString()
            let keyStart = keyOffset + 1, keyEnd = index - 1
            var wanted = -1
            var nestedWanted = -1
            if depth == 1 {
                // The top-level object: is this a member the caller asked for?
                wanted =
                    flags == 0
                    ? JSONScanner.Keys.index(
                        ofRaw: UnsafeRawBufferPointer(rebasing: bytes[keyStart..<keyEnd]), table: keyTable,
                        keys: keys)
                    : keys.takeUnretainedValue().index(ofDecoded: JSONScanner.decode(bytes, from: keyStart, to: keyEnd))
            } else if depth == 2 && inNested, let nested {
                // The nested object asked for: the same question with its names.
                nestedWanted =
                    flags == 0
                    ? JSONScanner.Keys.index(
                        ofRaw: UnsafeRawBufferPointer(rebasing: bytes[keyStart..<keyEnd]), table: nested.table,
                        keys: nested.keys)
                    : nested.keys.takeUnretainedValue().index(ofDecoded: JSONScanner.decode(bytes, from: keyStart, to: keyEnd))
            }
            // A key asked for repeats an earlier one exactly when its member was found already
            // (names and keys are told apart by the parser's equality, decoded `String`s): it
            // needs no comparing with the earlier keys, which only the other keys do, among
            // themselves. An envelope's keys are all asked for.
            if wanted >= 0 || nestedWanted >= 0 {
                let found = wanted >= 0 ? members.pointee[wanted] : nested?.members.pointee[nestedWanted]
                if found != nil {
                    throw fail("duplicate key \"\(JSONScanner.decode(bytes, from: keyStart, to: keyEnd))\"", at: keyOffset)
                }
            } else {
                try checkDuplicate(keyStart, keyEnd, flags: flags, base: base, seen: &seen, at: keyOffset)
            }
            skipWhitespace()
            guard index < count, bytes[index] == 0x3A else {
                throw unexpected("':'")
            }
            index += 1
            skipWhitespace()
            let valueStart = index
            let kind: JSONScanner.Kind
            var valueFlags: UInt8 = 0
            if index < count && bytes[index] == 0x22 {
                valueFlags = try scanString()
                kind = .string
            } else if wanted >= 0, let nested, wanted == nested.parent, index < count, bytes[index] == 0x7B {
                inNested = true
                kind = try scanValue(depth: depth)
                inNested = false
                nested.members.pointee.root = .object
            } else {
                kind = try scanValue(depth: depth)
            }
            if wanted >= 0 {
                members.pointee[wanted] = JSONScanner.Span(
                    kind: kind, range: valueStart..<index, hasEscapes: valueFlags & Self.escaped != 0)
            } else if nestedWanted >= 0, let nested {
                nested.members.pointee[nestedWanted] = JSONScanner.Span(
                    kind: kind, range: valueStart..<index, hasEscapes: valueFlags & Self.escaped != 0)
            }
            skipWhitespace()
            guard index < count else { throw unexpected("',' or '}'") }
            switch bytes[index] {
            case 0x2C:
                index += 1
                skipWhitespace()
                if index < count && bytes[index] == 0x7D {
                    throw fail("trailing comma in object")
                }
            case 0x7D:
                index += 1
                return
            default:
                throw unexpected("',' or '}'")
            }
        }
    }

    /// Refuses a key equal to an earlier key of the same object, as the parser does; for the keys
    /// not asked for, which are compared among themselves (see ``scanObject(depth:)``).
    @inline(__always)
    mutating func checkDuplicate(
        _ start: Int, _ end: Int, flags: UInt8, base: Int, seen: inout Set<String>?, at keyOffset: Int
    ) throws(JSONError) {
        if seen != nil {
            let key = JSONScanner.decode(bytes, from: start, to: end)
            // `seen` was just checked to be non-nil.
            if !seen!.insert(key).inserted {
                throw fail("duplicate key \"\(key)\"", at: keyOffset)
            }
            return
        }
        let known = (keyTop - base) / 2
        if flags != 0 || known >= 15 {
            // Every earlier key of this object is plain ASCII; from here on compare decoded keys.
            var keys = Set<String>(minimumCapacity: known + 8)
            var slot = base
            while slot < keyTop {
                keys.insert(JSONScanner.decode(bytes, from: keyStack[slot], to: keyStack[slot + 1]))
                slot += 2
            }
            let key = JSONScanner.decode(bytes, from: start, to: end)
            if !keys.insert(key).inserted {
                throw fail("duplicate key \"\(key)\"", at: keyOffset)
            }
            seen = keys
            return
        }
        // Plain ASCII keys: equal as `String`s exactly when equal as bytes.
        let length = end - start
        var slot = base
        while slot < keyTop {
            let otherStart = keyStack[slot]
            if keyStack[slot + 1] - otherStart == length {
                var same = true
                var offset = 0
                while offset < length {
                    if bytes[start + offset] != bytes[otherStart + offset] {
                        same = false
                        break
                    }
                    offset += 1
                }
                if same {
                    throw fail("duplicate key \"\(JSONScanner.decode(bytes, from: start, to: end))\"", at: keyOffset)
                }
            }
            slot += 2
        }
        guard keyTop + 2 <= keyStack.count else {
            throw JSONError(offset: Self.overflowOffset, message: "key stack full")
        }
        keyStack[keyTop] = start
        keyStack[keyTop + 1] = end
        keyTop += 2
    }

    mutating func scanArray(depth: Int) throws(JSONError) {
        if depth > JSONParser.maxDepth {
            throw fail("nesting deeper than \(JSONParser.maxDepth)")
        }
        index += 1  // [
        skipWhitespace()
        if index < count && bytes[index] == 0x5D {
            index += 1
            return
        }
        while true {
            _ = try scanValue(depth: depth)
            skipWhitespace()
            guard index < count else { throw unexpected("',' or ']'") }
            switch bytes[index] {
            case 0x2C:
                index += 1
                skipWhitespace()
                if index < count && bytes[index] == 0x5D {
                    throw fail("trailing comma in array")
                }
            case 0x5D:
                index += 1
                return
            default:
                throw unexpected("',' or ']'")
            }
        }
    }

    @inline(__always)
    func isDigit(_ offset: Int) -> Bool {
        offset < count && bytes[offset] >= 0x30 && bytes[offset] <= 0x39
    }

    mutating func scanNumber() throws(JSONError) {
        if bytes[index] == 0x2D {
            index += 1
        }
        guard isDigit(index) else { throw fail("expected a digit") }
        if bytes[index] == 0x30 {
            index += 1
            if isDigit(index) { throw fail("leading zeros are not allowed", at: index - 1) }
        } else {
            while isDigit(index) { index += 1 }
        }
        if index < count && bytes[index] == 0x2E {
            index += 1
            guard isDigit(index) else { throw fail("expected a digit after the decimal point") }
            while isDigit(index) { index += 1 }
        }
        if index < count && (bytes[index] | 0x20) == UInt8(ascii: "e") {
            index += 1
            if index < count && (bytes[index] == 0x2B || bytes[index] == 0x2D) {
                index += 1
            }
            guard isDigit(index) else { throw fail("expected a digit in the exponent") }
            while isDigit(index) { index += 1 }
        }
    }

    /// Scans a string from its opening quote to past its closing one.
    ///
    /// - Returns: ``escaped`` and ``nonASCII`` flags.
    mutating func scanString() throws(JSONError) -> UInt8 {
        let start = index
        index += 1  // "
        if let quotes {
            // Plain input: no escape, no control byte, nothing to decode; the next quote ends it.
            var word = index >> 6
            guard word < quotes.count else { throw fail("unterminated string", at: start) }
            var bits = quotes[word] & (~0 << UInt64(index & 63))
            while bits == 0 {
                word += 1
                guard word < quotes.count else { throw fail("unterminated string", at: start) }
                bits = quotes[word]
            }
            index = word << 6 + bits.trailingZeroBitCount + 1
            return 0
        }
        var flags: UInt8 = 0
        while true {
            // Eight plain bytes at a time: none a quote, a backslash, a control byte or ≥ 0x80.
            while index + 8 <= count {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let special = JSONLexing.specialBytes(word)
                if special == 0 {
                    index += 8
                } else {
                    // The lowest flag is exact (borrows only ever flag bytes above a true one).
                    index += special.trailingZeroBitCount >> 3
                    break
                }
            }
            guard index < count else { break }
            let byte = bytes[index]
            if byte == 0x22 {
                index += 1
                return flags
            }
            if byte == 0x5C {
                flags |= Self.escaped
                try scanEscape()
            } else if byte < 0x20 {
                throw fail("unescaped control character in string")
            } else if byte < 0x80 {
                index += 1
            } else {
                flags |= Self.nonASCII
                index += try utf8SequenceLength(at: index)
            }
        }
        throw fail("unterminated string", at: start)
    }

    /// Checks one escape at `index` (the backslash) and steps past it.
    mutating func scanEscape() throws(JSONError) {
        let escapeStart = index
        index += 1
        guard index < count else { throw fail("unterminated string") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case 0x22, 0x5C, 0x2F, UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"),
            UInt8(ascii: "t"):
            return
        case UInt8(ascii: "u"):
            let scalar = try hex4()
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                guard index + 1 < count, bytes[index] == 0x5C, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw fail("lone high surrogate in \\u escape", at: escapeStart)
                }
                index += 2
                let low = try hex4()
                guard low >= 0xDC00 && low <= 0xDFFF else {
                    throw fail("high surrogate not followed by a low surrogate", at: escapeStart)
                }
            } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                throw fail("lone low surrogate in \\u escape", at: escapeStart)
            }
        default:
            throw fail("invalid escape \\\(Character(Unicode.Scalar(byte)))", at: escapeStart)
        }
    }

    mutating func hex4() throws(JSONError) -> UInt32 {
        try JSONLexing.hex4(bytes, index: &index)
    }

    /// The length of the well-formed UTF-8 sequence whose lead byte (≥ 0x80) is at `offset`.
    func utf8SequenceLength(at offset: Int) throws(JSONError) -> Int {
        try JSONLexing.utf8SequenceLength(bytes, at: offset)
    }
}
