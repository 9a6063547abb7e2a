/// Eight bytes read as one little-endian word, searched all at once (SWAR).
package enum WordBytes {
    /// The high bit set in each byte of `word` that equals `byte`; zero when none does. The
    /// lowest flag is exact, so `trailingZeroBitCount >> 3` is the first match's offset; bytes
    /// above it may be flagged wrongly (a borrow carries from a true match upward).
    @inline(__always)
    package static func matching(_ byte: UInt8, in word: UInt64) -> UInt64 {
        matchingUnmasked(byte, in: word) & highs
    }

    /// ``matching(_:in:)`` before its mask with ``highs``: for callers that combine several
    /// such words and mask once.
    @inline(__always)
    package static func matchingUnmasked(_ byte: UInt8, in word: UInt64) -> UInt64 {
        let difference = word ^ (ones &* UInt64(byte))
        return (difference &- ones) & ~difference
    }

    /// A one in each byte.
    package static var ones: UInt64 { 0x0101_0101_0101_0101 }
    /// The high bit of each byte.
    package static var highs: UInt64 { 0x8080_8080_8080_8080 }
}
