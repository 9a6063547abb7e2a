import EventBusCore

/// Times kept as 8-byte codes instead of 16-byte strings.
///
/// A time in the bus's format (`2026-11-22T03:10:00.123Z`, years 0000–9999) is
/// kept as milliseconds since 1970 and formatted back byte for byte. Any other
/// text (the runtime should never pass one) is kept verbatim in a side table
/// and coded as `Int64.min + 1 + index`. `Int64.min` is "no time".
struct TimeTable: Sendable {
    /// The code for "no time".
    static let none = Int64.min
    /// Times that are not in the bus's format, by code.
    private(set) var irregular: [String] = []
    private var irregularIndex: [String: Int] = [:]

    /// An empty table.
    init() {}

    /// A table holding `irregular` (restored from a snapshot).
    init(irregular: [String]) {
        self.irregular = irregular
        for (index, text) in irregular.enumerated() { irregularIndex[text] = index }
    }

    /// The code for `text`.
    mutating func encode(_ text: String) -> Int64 {
        if let millis = Self.parse(text) { return millis }
        if let index = irregularIndex[text] { return Int64.min + 1 + Int64(index) }
        irregular.append(text)
        irregularIndex[text] = irregular.count - 1
        return Int64.min + 1 + Int64(irregular.count - 1)
    }

    /// The text for `code`, `nil` for ``none``.
    func decode(_ code: Int64) -> String? {
        if code == Self.none { return nil }
        if code < Int64.min + 1 + Int64(irregular.count) {
            return irregular[Int(code - (Int64.min + 1))]
        }
        return Self.format(code)
    }

    /// Milliseconds since 1970 for `YYYY-MM-DDTHH:MM:SS.mmmZ`, or `nil`.
    ///
    /// Every ack's time is parsed once: the digits are read in pairs, with one check that
    /// all seventeen are digits, not through an optional per field.
    static func parse(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { b -> Int64? in
            guard b.count == 24, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A,
                b[19] == 0x2E, b[23] == 0x5A
            else { return nil }
            var notDigit = false
            @inline(__always) func pair(_ at: Int) -> Int64 {
                let high = b[at] &- 0x30, low = b[at + 1] &- 0x30
                notDigit = notDigit || high > 9 || low > 9
                return Int64(high) * 10 + Int64(low)
            }
            let y = pair(0) * 100 + pair(2), mo = pair(5), d = pair(8), h = pair(11), mi = pair(14), s = pair(17)
            let last = b[22] &- 0x30
            notDigit = notDigit || last > 9
            let ms = pair(20) * 10 + Int64(last)
            guard !notDigit, (1...12).contains(mo), d >= 1, d <= daysInMonth(y, mo), h < 24, mi < 60, s < 60
            else { return nil }
            let days = daysFromCivil(y, mo, d)
            return ((days * 24 + h) * 60 + mi) * 60_000 + s * 1000 + ms
        }
    }

    /// The bus's text for milliseconds since 1970.
    static func format(_ millis: Int64) -> String {
        String(unsafeUninitializedCapacity: textLength) { buffer in
            format(millis, into: buffer.baseAddress!)
            return textLength
        }
    }

    /// The length of the bus's text for a time: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    static let textLength = 24

    /// Writes the bus's text for milliseconds since 1970 (``textLength`` bytes) at `out`.
    ///
    /// Each field is written as two digits at once from small values: a loop taking one
    /// digit of a 64-bit value at a time cost about 760 instructions per time, and the
    /// reducer writes one or two times into each of its outputs.
    static func format(_ millis: Int64, into out: UnsafeMutablePointer<UInt8>) {
        var days = millis / 86_400_000
        var rest = millis % 86_400_000
        if rest < 0 {
            rest += 86_400_000
            days -= 1
        }
        let (year, month, day) = civilFromDays(days)
        let ofDay = Int(rest)
        let seconds = ofDay / 1000, fraction = ofDay % 1000
        @inline(__always) func pair(_ value: Int, at offset: Int) {
            out[offset] = 0x30 &+ UInt8(truncatingIfNeeded: value / 10)
            out[offset + 1] = 0x30 &+ UInt8(truncatingIfNeeded: value % 10)
        }
        pair(Int(year / 100), at: 0); pair(Int(year % 100), at: 2); out[4] = 0x2D
        pair(Int(month), at: 5); out[7] = 0x2D
        pair(Int(day), at: 8); out[10] = 0x54
        pair(seconds / 3600, at: 11); out[13] = 0x3A
        pair(seconds / 60 % 60, at: 14); out[16] = 0x3A
        pair(seconds % 60, at: 17); out[19] = 0x2E
        out[20] = 0x30 &+ UInt8(truncatingIfNeeded: fraction / 100)
        pair(fraction % 100, at: 21); out[23] = 0x5A
    }

    /// Writes the time of `code` as a JSON string, `null` for ``none``: what
    /// `writer.string(decode(code))` writes, without making a string (two
    /// allocations per time, and outputs carry one or two times each).
    func write(_ code: Int64, to writer: inout JSONWriter) {
        if code == Self.none {
            writer.null()
        } else if code < Int64.min + 1 + Int64(irregular.count) {
            writer.string(irregular[Int(code - (Int64.min + 1))])
        } else {
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.textLength + 2) { buffer in
                buffer[0] = 0x22
                Self.format(code, into: buffer.baseAddress! + 1)
                buffer[Self.textLength + 1] = 0x22
                writer.raw(UnsafeRawBufferPointer(buffer))
            }
        }
    }

    private static func isLeap(_ y: Int64) -> Bool { y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) }

    private static func daysInMonth(_ y: Int64, _ m: Int64) -> Int64 {
        switch m {
        case 2: isLeap(y) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 (H. Hinnant's algorithm).
    private static func daysFromCivil(_ year: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civilFromDays(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
