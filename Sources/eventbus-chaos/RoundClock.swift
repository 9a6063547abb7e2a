/// Seconds since a round started, on the monotonic clock: the times of the observer's
/// history and of the faults, on one scale.
struct RoundClock: Sendable {
    private let start = ContinuousClock.now

    var seconds: Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
