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
