/// When a plugin that ended is started again: the supervisor's restart rule as a
/// value, tested without processes.
///
/// Each exit waits a backoff that doubles from ``SupervisorConfig/initialBackoff`` up
/// to ``SupervisorConfig/maximumBackoff``. A plugin that ran at least
/// ``SupervisorConfig/stableAfter`` starts over from the first backoff. After
/// ``SupervisorConfig/crashLoopLimit`` quick exits in a row the plugin is crash
/// looping: it is retried every ``SupervisorConfig/crashLoopBackoff`` until it runs
/// stable again. Events wait for it; nothing is skipped.
struct RestartSchedule: Sendable, Equatable {
    /// What to do after one exit.
    struct Decision: Sendable, Equatable {
        /// How long to wait before the next start.
        var wait: Duration
        /// Whether the plugin is crash looping now.
        var crashLooping: Bool
        /// Whether this exit made it crash loop (it was not before): the one loud report.
        var enteredCrashLoop: Bool
        /// Quick exits in a row, this one included.
        var quickExits: Int
    }

    private let initialBackoff: Duration
    private let maximumBackoff: Duration
    private let stableAfter: Duration
    private let crashLoopLimit: Int
    private let crashLoopBackoff: Duration
    /// The wait after the next quick exit.
    private var backoff: Duration
    private var quickExits = 0
    private(set) var crashLooping = false

    init(_ config: SupervisorConfig) {
        initialBackoff = config.initialBackoff
        maximumBackoff = config.maximumBackoff
        stableAfter = config.stableAfter
        crashLoopLimit = config.crashLoopLimit
        crashLoopBackoff = config.crashLoopBackoff
        backoff = config.initialBackoff
    }

    /// The plugin ended after running for `ran`.
    mutating func exited(after ran: Duration) -> Decision {
        if ran >= stableAfter {
            quickExits = 0
            backoff = initialBackoff
        } else {
            quickExits += 1
        }
        let wasLooping = crashLooping
        crashLooping = quickExits >= crashLoopLimit
        let wait: Duration
        if crashLooping {
            wait = crashLoopBackoff
        } else {
            wait = backoff
            backoff = min(backoff * 2, maximumBackoff)
        }
        return Decision(wait: wait, crashLooping: crashLooping, enteredCrashLoop: crashLooping && !wasLooping, quickExits: quickExits)
    }
}
