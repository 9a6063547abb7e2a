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

    /// `firstOffset` (and `contains`) agree with a naive search: patterns of 0 to 11 bytes put
    /// at every offset of texts up to 40 bytes full of the pattern's first byte, whole or with
    /// the last byte changed (a candidate that fails late), across the eight-byte steps.
    @Test func firstOffsetAgreesWithANaiveSearch() {
        func naive(_ text: [UInt8], _ pattern: [UInt8]) -> Int? {
            guard !pattern.isEmpty else { return 0 }
            guard text.count >= pattern.count else { return nil }
            return (0...(text.count - pattern.count)).first { Array(text[$0..<($0 + pattern.count)]) == pattern }
        }
        for patternLength in 0...11 {
            let pattern = [UInt8(ascii: "\"")] + (0..<max(0, patternLength - 1)).map { UInt8(97 + $0) }
            let used = Array(pattern.prefix(patternLength))
            var nearMiss = used
            if let last = nearMiss.indices.last, last > 0 { nearMiss[last] = UInt8(ascii: "Z") }
            for length in 0...40 {
                for offset in -1...length {
                    var text = (0..<length).map { $0 % 3 == 0 ? UInt8(ascii: "\"") : UInt8(ascii: "x") }
                    for (candidate, name) in [(used, "whole"), (nearMiss, "near miss")] {
                        if offset >= 0 && offset + candidate.count <= length {
                            text.replaceSubrange(offset..<(offset + candidate.count), with: candidate)
                        }
                        let found = text.withUnsafeBytes { t in used.withUnsafeBytes { ByteRun.firstOffset(of: $0, in: t) } }
                        let contained = text.withUnsafeBytes { t in used.withUnsafeBytes { ByteRun.contains(t, $0) } }
                        #expect(found == naive(text, used), "pattern \(patternLength), text \(length), \(name) at \(offset)")
                        #expect(contained == (found != nil))
                    }
                }
            }
        }
    }
}
