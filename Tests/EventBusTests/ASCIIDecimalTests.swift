import Testing

@testable import EventBus
@testable import EventBusCore

/// SEQs in ASCII decimal: what is written reads back, and only 1 to 20 digits that fit a UInt64 read at all.
@Suite struct ASCIIDecimalTests {
    static func written(_ value: UInt64) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 20) { buffer, count in
            count = ASCIIDecimal.write(value, to: UnsafeMutableRawPointer(buffer.baseAddress!))
        }
    }

    @Test(arguments: [0, 1, 9, 10, 99, 100, 1_234_567, UInt64(UInt32.max), UInt64.max - 1, UInt64.max])
    func whatIsWrittenReadsBack(value: UInt64) {
        let bytes = Self.written(value)
        #expect(bytes == Array(String(value).utf8))
        #expect(bytes.count == ASCIIDecimal.digits(value))
        #expect(ASCIIDecimal.parse(bytes[...]) == value)
    }

    /// Two digits are written at a time: every value up to 100,000, and each side of every
    /// power of ten, is written as `String` writes it, in as many bytes as `digits` says.
    @Test func everyDigitCountAndEveryPairIsWrittenAsAStringIs() {
        var values = Array(UInt64(0)...100_000)
        var power: UInt64 = 10
        for _ in 1...19 {
            values += [power - 1, power, power + 1, power + 99, power / 2 * 3]
            power = power.multipliedReportingOverflow(by: 10).partialValue
        }
        for value in values {
            let bytes = Self.written(value)
            guard bytes == Array(String(value).utf8), bytes.count == ASCIIDecimal.digits(value) else {
                Issue.record("\(value) written as \(String(decoding: bytes, as: UTF8.self))")
                return
            }
        }
    }

    @Test(arguments: ["", "-1", "+1", "1 ", " 1", "1a", "0x10", "18446744073709551616", "99999999999999999999",
                      "000000000000000000001"])
    func anythingButOneToTwentyDigitsThatFitIsRefused(text: String) {
        #expect(ASCIIDecimal.parse(Array(text.utf8)[...]) == nil)
    }

    @Test func leadingZerosWithinTwentyDigitsAreTheSameNumber() {
        #expect(ASCIIDecimal.parse(Array("00000000000000000042".utf8)[...]) == 42)
        #expect(ASCIIDecimal.parse(Array("0".utf8)[...]) == 0)
    }

    @Test func aBatchHeaderReadsItsDigitsAndStepsPastTheEnding() {
        func read(_ text: String, from start: Int = 0) -> (UInt64?, Int) {
            Array(text.utf8).withUnsafeBytes { bytes in
                var offset = start
                let value = ASCIIDecimal.read(bytes, &offset, ending: UInt8(ascii: "\n"))
                return (value, offset)
            }
        }
        #expect(read("311\n{}") == (311, 4))
        #expect(read("7\n12\nx", from: 2) == (12, 5))
        // No ending within 20 digits, no digits, a non-digit, or past a UInt64: nothing read, nothing moved.
        #expect(read("123") == (nil, 0))
        #expect(read(String(repeating: "1", count: 21) + "\n") == (nil, 0))
        #expect(read("\n") == (nil, 0))
        #expect(read("1x\n") == (nil, 0))
        #expect(read("18446744073709551616\n") == (nil, 0))
    }
}
