import EventBusCore
import Foundation
import Testing

@testable import ReceiptReducer

/// ``TimeTable``'s codes: a time in the bus's format comes back byte for byte, and
/// ``TimeTable/write(_:to:)`` writes exactly what `writer.string(decode(code))` would.
@Suite struct TimeTableTests {
    /// The bus's text for `millis`, as Foundation formats it in UTC.
    static func reference(_ millis: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.calendar = Calendar(identifier: .iso8601)
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1_000))
    }

    @Test func formatAgreesWithFoundationAndParsesBack() {
        var random = SplitMix64(seed: 0x7177)
        // Years 1900–2300, before and after 1970, leap days and the ends of days included.
        let first: Int64 = -2_208_988_800_000, last: Int64 = 10_413_792_000_000
        var samples: [Int64] = [0, -1, 951_782_400_000, 951_868_799_999, 4_107_542_400_000, 1_795_000_000_123]
        for _ in 0..<2_000 { samples.append(first + Int64(random.below(Int(last - first)))) }
        for millis in samples {
            let text = TimeTable.format(millis)
            #expect(text == Self.reference(millis), "\(millis)")
            #expect(TimeTable.parse(text) == millis, "\(text)")
        }
    }

    @Test func formatKeepsTheFourDigitYearsTheParserTakes() {
        for text in ["0000-01-01T00:00:00.000Z", "0004-02-29T23:59:59.999Z", "9999-12-31T23:59:59.999Z"] {
            let millis = TimeTable.parse(text)
            #expect(millis.map(TimeTable.format) == text)
        }
    }

    /// A text one byte away from the format, or naming a date or time that does not exist,
    /// is not a time of the bus's format (it is kept verbatim instead).
    @Test func parseRefusesEveryNonDigitAndImpossibleTimes() {
        let valid = Array("2024-02-29T23:59:59.999Z".utf8)
        #expect(TimeTable.parse(String(decoding: valid, as: UTF8.self)) != nil)
        let digitPositions = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22]
        for position in digitPositions {
            for byte in [UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "a"), UInt8(ascii: " ")] {
                var text = valid
                text[position] = byte
                #expect(TimeTable.parse(String(decoding: text, as: UTF8.self)) == nil, "\(position) \(byte)")
            }
        }
        for position in [4, 7, 10, 13, 16, 19, 23] {
            var text = valid
            text[position] = UInt8(ascii: "0")
            #expect(TimeTable.parse(String(decoding: text, as: UTF8.self)) == nil, "separator \(position)")
        }
        for text in ["2023-02-29T00:00:00.000Z", "2024-13-01T00:00:00.000Z", "2024-00-01T00:00:00.000Z",
                     "2024-04-31T00:00:00.000Z", "2024-01-00T00:00:00.000Z", "2024-01-01T24:00:00.000Z",
                     "2024-01-01T00:60:00.000Z", "2024-01-01T00:00:60.000Z", "2024-01-01T00:00:00.000",
                     "2024-01-01T00:00:00.0000Z"] {
            #expect(TimeTable.parse(text) == nil, "\(text)")
        }
        #expect(TimeTable.parse("2024-12-31T23:59:59.999Z") == TimeTable.parse("2025-01-01T00:00:00.000Z").map { $0 - 1 })
    }

    @Test func writeWritesWhatTheDecodedStringWrites() {
        var table = TimeTable()
        let codes = [TimeTable.none, table.encode("2026-11-22T03:10:00.123Z"), table.encode("yesterday \"noon\""),
                     table.encode("1969-12-31T23:59:59.999Z")]
        for code in codes {
            var written = JSONWriter(), expected = JSONWriter()
            written.beginArray(); expected.beginArray()
            table.write(code, to: &written)
            table.write(code, to: &written)
            if let text = table.decode(code) { expected.string(text); expected.string(text) } else { expected.null(); expected.null() }
            written.endArray(); expected.endArray()
            #expect(written.bytes == expected.bytes, "\(String(decoding: written.bytes, as: UTF8.self))")
        }
    }
}
