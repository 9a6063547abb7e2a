/// A 128-bit fingerprint of an event's identity (STAGE, `source`, `id`).
///
/// The dedup window holds up to millions of identities; keeping the strings would
/// cost ~100 bytes each, a fingerprint costs 16. Two independent 64-bit
/// multiply-rotate lanes fed eight bytes at a time, each finalised with a
/// murmur3 mix, make an accidental collision among a few million keys about as
/// likely as 1 in 10^25. Fingerprints are never stored: the window is rebuilt
/// from the log at start, so the function may change between versions.
struct DedupKey: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    init(stage: some Collection<UInt8>, source: some Collection<UInt8>, id: some Collection<UInt8>) {
        var lanes = Lanes()
        // Lengths go in first so that ("ab","c") and ("a","bc") differ.
        lanes.feed(UInt64(truncatingIfNeeded: stage.count) | UInt64(truncatingIfNeeded: source.count) << 21
                   | UInt64(truncatingIfNeeded: id.count) << 42)
        lanes.feed(stage)
        lanes.feed(source)
        lanes.feed(id)
        high = DedupKey.mix(lanes.a ^ 0x6a09_e667_f3bc_c908)
        low = DedupKey.mix(lanes.b &+ high)
    }

    /// Two independent 64-bit multiply-rotate lanes, fed eight bytes at a time.
    private struct Lanes {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x9e37_79b9_7f4a_7c15

        mutating func feed(_ word: UInt64) {
            a = Self.rotated(a ^ (word &* 0x87c3_7b91_1142_53d5), by: 31) &* 0x4cf5_ad43_2745_937f
            b = Self.rotated(b ^ (word &* 0xff51_afd7_ed55_8ccd), by: 27) &* 0xc4ce_b9fe_1a85_ec53
        }

        /// Masking shifts: one rotate instruction (the checked `<<` and `>>` test for
        /// overshifting, and the function was not even inlined: a call per lane per word).
        @inline(__always)
        private static func rotated(_ value: UInt64, by bits: UInt64) -> UInt64 {
            value &<< bits | value &>> (64 &- bits)
        }

        mutating func feed(_ bytes: some Collection<UInt8>) {
            if bytes.withContiguousStorageIfAvailable({ feed(raw: UnsafeRawBufferPointer($0)) }) == nil {
                Array(bytes).withUnsafeBytes { feed(raw: $0) }
            }
        }

        private mutating func feed(raw bytes: UnsafeRawBufferPointer) {
            var offset = 0
            while offset + 8 <= bytes.count {
                feed(bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset += 8
            }
            // The last 0-7 bytes, with their count in the top byte so that trailing zeros count:
            // byte i of them at bits 8i. Eight bytes or more: one load of the last eight,
            // shifted down to the ones left (little-endian), instead of a loop.
            let remaining = bytes.count - offset
            var tail = UInt64(remaining) << 56
            if remaining > 0 && bytes.count >= 8 {
                tail |= bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self).littleEndian &>> UInt64(8 * (8 - remaining))
            } else {
                var shift: UInt64 = 0
                while offset < bytes.count {
                    tail |= UInt64(bytes[offset]) << shift
                    shift += 8
                    offset += 1
                }
            }
            feed(tail)
        }
    }

    /// `high` is already a well-mixed 64-bit hash: feed the hasher only that.
    func hash(into hasher: inout Hasher) {
        hasher.combine(high)
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var x = value
        x ^= x >> 33
        x = x &* 0xff51_afd7_ed55_8ccd
        x ^= x >> 33
        x = x &* 0xc4ce_b9fe_1a85_ec53
        x ^= x >> 33
        return x
    }
}
