/// The failover campaign's publisher gaps: each time between two OK answers longer than
/// `threshold`, with what happened during it, to tell which part of a failover a long
/// stall belongs to (docs/scale-out.md). A value with no I/O: the campaign's loop tells it
/// what it does and when.
struct PublishGaps {
    typealias Instant = ContinuousClock.Instant

    /// One fault injected.
    struct Fault: Sendable {
        var kind: String
        var at: Instant
    }

    /// One time between two OKs longer than the threshold, and what the loop did meanwhile.
    struct Gap: Sendable {
        var start: Instant
        var end: Instant = .now
        var busy = 0
        var resentAfterSilence = 0
        var resentAfterDisconnect = 0
        var gatewayStarts = 0
        var gatewayExits = 0
        /// The time the loop spent in calls that block it (it then neither sends nor
        /// reads), by what it did.
        var blocked: [String: Duration] = [:]
        /// The last fault injected before the gap ended (perhaps during it).
        var fault: Fault?

        var length: Duration { start.duration(to: end) }
    }

    let threshold: Duration
    let publishStart: Instant
    private(set) var gaps: [Gap] = []
    private(set) var longest: Duration = .zero
    /// The time the publisher held its PUBs with none unanswered, and how often.
    private(set) var heldTime: Duration = .zero
    private(set) var holds = 0
    /// Since the last OK.
    private var current: Gap
    private var lastFault: Fault?

    init(threshold: Duration, publishStart: Instant) {
        self.threshold = threshold
        self.publishStart = publishStart
        current = Gap(start: publishStart)
    }

    mutating func busyAnswer() { current.busy += 1 }
    mutating func resentAfterSilence(_ count: Int) { current.resentAfterSilence += count }
    mutating func resentAfterDisconnect(_ count: Int) { current.resentAfterDisconnect += count }
    mutating func gatewayStarted() { current.gatewayStarts += 1 }
    mutating func gatewayExited() { current.gatewayExits += 1 }
    mutating func blocked(_ what: String, from start: Instant, to end: Instant) {
        current.blocked[what, default: .zero] += start.duration(to: end)
    }
    mutating func faultInjected(_ kind: String, at: Instant) { lastFault = Fault(kind: kind, at: at) }

    /// The publisher held its next PUB from `start` to `end` with none unanswered (the
    /// campaign's pacing, waiting for a fault it could not inject yet): no OK was due, so
    /// the gap's clock starts again at `end`.
    mutating func held(from start: Instant, to end: Instant) {
        heldTime += start.duration(to: end)
        holds += 1
        current.start = max(current.start, end)
    }

    /// An OK at `now`: the gap it ends when it is longer than the threshold.
    mutating func ok(at now: Instant) -> Gap? {
        var gap = current
        gap.end = now
        gap.fault = lastFault
        current = Gap(start: now)
        longest = max(longest, gap.length)
        guard gap.length > threshold else { return nil }
        gaps.append(gap)
        return gap
    }

    /// Milliseconds, for the logs.
    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// A gap's metadata values, by key (`test.…`, as the campaign's other lines).
    func metadata(_ gap: Gap) -> [(String, String)] {
        let ms = Self.milliseconds
        var items: [(String, String)] = [
            ("test.gap_ms", "\(ms(gap.length))"),
            ("test.gap_start_ms", "\(ms(publishStart.duration(to: gap.start)))"),
            ("test.last_fault", gap.fault?.kind ?? "none"),
            // Positive: the fault came that long before the gap began; negative: during it.
            ("test.fault_before_gap_ms", gap.fault.map { "\(ms($0.at.duration(to: gap.start)))" } ?? "-"),
            ("bus.busy", "\(gap.busy)"),
            ("bus.resent_after_silence", "\(gap.resentAfterSilence)"),
            ("bus.resent_after_disconnect", "\(gap.resentAfterDisconnect)"),
            ("test.gateway_starts", "\(gap.gatewayStarts)"),
            ("test.gateway_exits", "\(gap.gatewayExits)"),
        ]
        let blocked = gap.blocked.sorted { $0.key < $1.key }.map { "\($0.key): \(ms($0.value))" }
        items.append(("test.blocked_ms", "[\(blocked.joined(separator: ", "))]"))
        return items
    }
}
