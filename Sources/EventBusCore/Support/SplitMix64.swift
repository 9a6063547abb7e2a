/// A small seeded generator (SplitMix64): the same seed gives the same sequence on any
/// machine and Swift version, which the standard library's generators do not promise.
/// For deterministic workloads (`eventbus-bench workload`) and generated test sequences,
/// never for anything secret.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in `0..<bound` (`bound` > 0).
    package mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// Uniform in `range`.
    package mutating func inRange(_ range: ClosedRange<Int>) -> Int { range.lowerBound + below(range.count) }

    /// Uniform in [0, 1).
    package mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// True with probability `percent` / 100.
    package mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    /// True with probability `probability` (0 to 1).
    package mutating func chance(probability: Double) -> Bool { unit() < probability }
}
