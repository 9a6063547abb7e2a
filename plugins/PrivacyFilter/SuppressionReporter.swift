import Logging
import Synchronization

/// Logs a filter's suppression counts at info, at most every ``interval``
/// and only when they changed since the last line.
public final class SuppressionReporter: Sendable {
    private struct Last {
        var time: ContinuousClock.Instant
        var counts: [SuppressionReason: UInt64]
    }

    private let logger: Logger
    private let policy: PrivacyPolicy
    private let interval: Duration
    private let last: Mutex<Last>

    /// A reporter for `policy` logging to `logger`.
    public init(policy: PrivacyPolicy, logger: Logger, interval: Duration = .seconds(10)) {
        self.logger = logger
        self.policy = policy
        self.interval = interval
        last = Mutex(Last(time: .now, counts: [:]))
    }

    /// Logs `counts` if they changed and the interval has passed.
    public func note(_ counts: [SuppressionReason: UInt64]) {
        let now = ContinuousClock.now
        let due = last.withLock { last -> Bool in
            // The time first: it is called for every event, and comparing two dictionaries
            // costs more than comparing two instants.
            guard now - last.time >= interval, last.counts != counts else { return false }
            last = Last(time: now, counts: counts)
            return true
        }
        guard due else { return }
        var metadata: Logger.Metadata = ["privacy.policy": "\(policy.name)"]
        for reason in SuppressionReason.allCases { metadata["privacy.suppressed.\(reason.rawValue)"] = "\(counts[reason] ?? 0)" }
        logger.info("receipts suppressed", metadata: metadata)
    }
}
