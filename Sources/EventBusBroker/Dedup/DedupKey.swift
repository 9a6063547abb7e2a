/// A 128-bit fingerprint of an event's identity (STAGE, `source`, `id`).
///
/// The dedup window holds up to millions of identities; keeping the strings would
/// cost ~100 bytes each, a fingerprint costs 16. Two independent 64-bit hashes
/// (FNV-1a and a multiply-rotate hash with different seeds, each finalised with
/// a murmur3 mix) make an accidental collision among a few million keys about
/// as likely as 1 in 10^25.
struct DedupKey: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    init(stage: some Collection<UInt8>, source: some Collection<UInt8>, id: some Collection<UInt8>) {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x9e37_79b9_7f4a_7c15
        func feed(_ byte: UInt8) {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            b = ((b ^ UInt64(byte)) &* 0xff51_afd7_ed55_8ccd)
            b = (b << 31) | (b >> 33)
        }
        // Lengths go in first so that ("ab","c") and ("a","bc") differ.
        for part in [stage.count, source.count, id.count] {
            for shift in stride(from: 0, to: 32, by: 8) { feed(UInt8(truncatingIfNeeded: part >> shift)) }
        }
        for byte in stage { feed(byte) }
        for byte in source { feed(byte) }
        for byte in id { feed(byte) }
        high = DedupKey.mix(a)
        low = DedupKey.mix(b ^ 0x6a09_e667_f3bc_c908)
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
