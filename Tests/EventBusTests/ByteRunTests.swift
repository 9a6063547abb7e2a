import Testing
@testable import EventBusCore

@Suite struct ByteRunTests {
    /// Every length across a word's edge, and a difference at every offset: equal exactly when
    /// the standard library's byte-by-byte compare says so.
    @Test func agreesWithElementsEqualAtEveryLengthAndOffset() {
        for length in 0...19 {
            let base = (0..<length).map { UInt8(97 + $0 % 26) }
            for offset in -1..<length {
                var other = base
                if offset >= 0 { other[offset] ^= 0x20 }
                base.withUnsafeBufferPointer { a in
                    other.withUnsafeBufferPointer { b in
                        #expect(ByteRun.equal(a, b) == a.elementsEqual(b), "length \(length), differs at \(offset)")
                        #expect(ByteRun.equal(a, other) == a.elementsEqual(other))
                    }
                }
            }
            let longer = base + [0x21]
            base.withUnsafeBufferPointer { a in
                #expect(!ByteRun.equal(a, longer), "a run is not equal to a longer one")
                #expect(ByteRun.starts(a, with: Array(base.prefix(length / 2))))
                #expect(!ByteRun.starts(a, with: longer))
            }
        }
    }
}
