/// A deadline for a polling loop that counts only the time the waiting task got
/// to look: on a loaded machine a task may not run for seconds (other tests
/// hold the few threads of the cooperative pool), and a wall-clock deadline
/// would then fail a wait whose condition held long before. A gap between two
/// looks counts at most ``maxGap``; the loop looks once more before giving up.
public struct Patience: Sendable {
    private let clock = ContinuousClock()
    private var last: ContinuousClock.Instant
    private var spent: Duration = .zero
    /// How long the loop may look.
    public let timeout: Duration
    /// The most one gap between two looks counts for.
    public let maxGap: Duration

    public init(_ timeout: Duration, maxGap: Duration = .milliseconds(500)) {
        self.timeout = timeout
        self.maxGap = maxGap
        last = clock.now
    }

    /// Counts the time since the last look; false once the looks used up ``timeout``.
    public mutating func allowsAnotherLook() -> Bool {
        let now = clock.now
        spent += min(now - last, maxGap)
        last = now
        return spent < timeout
    }
}
