import Testing

@testable import EventBusBroker

/// Distinct identities get distinct fingerprints; the same identity the same one.
@Suite struct DedupKeyTests {
    @Test func aMillionNearbyIdentitiesHaveDistinctFingerprints() {
        var seen = Set<DedupKey>()
        seen.reserveCapacity(1_000_000)
        for n in 0..<1_000_000 {
            seen.insert(DedupKey(stage: Array("in".utf8), source: Array("/chat-api".utf8), id: Array("msg-\(n)".utf8)))
        }
        #expect(seen.count == 1_000_000)
    }

    @Test func theSameBytesGiveTheSameKeyAndBoundariesCount() {
        let key = DedupKey(stage: Array("in".utf8), source: Array("/a".utf8), id: Array("b".utf8))
        #expect(key == DedupKey(stage: "in".utf8, source: "/a".utf8, id: Array("xb".utf8).dropFirst()))
        #expect(key != DedupKey(stage: Array("in".utf8), source: Array("/ab".utf8), id: []))
        #expect(key != DedupKey(stage: Array("in".utf8), source: Array("/a".utf8), id: Array("b\u{0}".utf8)))
        let long = Array(repeating: UInt8(ascii: "z"), count: 23)
        #expect(DedupKey(stage: [], source: long, id: long) != DedupKey(stage: [], source: long + [0], id: long.dropLast()))
    }

    /// A fingerprint depends on its three parts' bytes and nothing else: where the bytes
    /// lie, and what lies beside them, change nothing (the last bytes of a part are read as
    /// one word); any byte that differs, or a trailing zero more, changes the key.
    @Test func theBytesOfEachPartAndOnlyThemMakeTheKey() {
        for length in 0...40 {
            let id = (0..<length).map { UInt8(truncatingIfNeeded: 0x41 + $0 * 7) }
            let key = DedupKey(stage: Array("in".utf8), source: Array("/chat-api".utf8), id: id)
            for padding in 0...9 {
                // The same bytes inside larger arrays, with other bytes before and after them.
                let around = [UInt8](repeating: UInt8(truncatingIfNeeded: 0xA5 &+ padding), count: padding) + id
                    + [UInt8](repeating: 0xFF, count: 9 - padding)
                let slice = around[padding..<(padding + length)]
                #expect(DedupKey(stage: Array("in".utf8), source: Array("/chat-api".utf8), id: slice) == key,
                        "id of \(length) bytes at offset \(padding)")
            }
            for position in 0..<length {
                var other = id
                other[position] ^= 0x01
                #expect(DedupKey(stage: Array("in".utf8), source: Array("/chat-api".utf8), id: other) != key,
                        "id of \(length) bytes, differing at \(position)")
            }
            #expect(DedupKey(stage: Array("in".utf8), source: Array("/chat-api".utf8), id: id + [0]) != key,
                    "a trailing zero byte counts (length \(length))")
        }
    }
}
