import EventBusCore

/// What one round does, drawn from its seed alone: the same seed gives the same round
/// (pipeline, workload, fault and its moment), which is how a failing round replays.
public struct FaultPlan: Sendable, Equatable {
    public static let defaultPipeline = ["receipt-reducer", "read-privacy", "delivery-privacy"]

    public let seed: UInt64
    /// The plugins `eventbus up` runs: the default pipeline in two rounds of three, the
    /// reducer alone in the third (then `out` is the reducer's output, compared exactly too).
    public let pipeline: [String]
    public let fault: Fault
    /// When the fault hits, after the publishers started.
    public let atMilliseconds: Int
    /// The seed of the round's workload (the chat mix of ``ChatWorkload``).
    public let workloadSeed: UInt64

    /// The round for `seed`, with `publishers` publisher processes.
    public init(seed: UInt64, publishers: Int) {
        self.seed = seed
        var random = SplitMix64(seed: seed)
        pipeline = random.below(3) == 2 ? ["receipt-reducer"] : Self.defaultPipeline
        workloadSeed = random.next() >> 1
        let at = random.inRange(300...3_000)
        var targets: [FaultTarget] = [.supervisor] + pipeline.map { .plugin($0) }
        if publishers > 0 { targets += (0..<publishers).map { .publisher($0) } }
        let target = targets[random.below(targets.count)]
        fault = switch random.below(8) {
        case 0, 1: .kill(target)
        case 2, 3: .stop(target, milliseconds: random.inRange(200...4_000))
        case 4: .tornTail(fraction: random.unit())
        case 5: .failingFsync(fraction: random.unit())
        case 6: .diskFull(milliseconds: random.inRange(500...4_000))
        // Up to two hours either way, past the dedup window's 10 minutes.
        default: .clockJump(seconds: random.inRange(60...7_200) * (random.below(2) == 0 ? -1 : 1))
        }
        // A full disk matters while the publishers write: early, 30–300 ms in (a round's
        // publishers are done within a second or two).
        if case .diskFull = fault { atMilliseconds = at / 10 } else { atMilliseconds = at }
    }

    /// The seed of the round after the one of `seed`: round i + 1 of a campaign started with
    /// SEED is round 1 of a campaign started with this, so any round replays alone.
    public static func nextSeed(after seed: UInt64) -> UInt64 {
        var random = SplitMix64(seed: seed ^ 0x6368_616F_7321)  // "chaos!"
        return random.next()
    }
}
