#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A deliberately broken behaviour, for proving that the fault campaign's checker catches
/// what it must (docs/reliability.md, "The checker, checked"). Only a mutant build has
/// them: one compiled with `-Xswiftc -DEVENTBUS_MUTANTS` (`make test-mutants` builds it in
/// `.build-mutants`), and there the variable `EVENTBUS_MUTANT` picks one. Every call site
/// sits under `#if EVENTBUS_MUTANTS`, so an ordinary build holds none of them.
public enum Mutant: String, Sendable, CaseIterable {
    /// The broker sends a commit group's confirms when it hands the group's fsync to the
    /// sync worker, not when the fsync has completed.
    case confirmBeforeFsync = "confirm-before-fsync"
    /// The broker's dedup window holds nothing: a retried event is appended again.
    case dedupWindowZero = "dedup-window-0"
    /// The receipt reducer drops every 16th `message.read` by log SEQ: that reader's
    /// watermark skips a move.
    case reducerSkipsWatermark = "reducer-skips-watermark"

    /// The rule of the campaign's checker it breaks, as docs/reliability.md words it.
    public var rule: String {
        switch self {
        case .confirmBeforeFsync: "rule 2, a confirmed event is in the log"
        case .dedupWindowZero: "rule 3, nothing twice"
        case .reducerSkipsWatermark: "rule 4, out is the model's"
        }
    }

    /// The fault under which a round shows it (a fault kind's prefix, as `--fault` takes).
    public var fault: String {
        switch self {
        case .confirmBeforeFsync: "torn tail"
        case .dedupWindowZero: "kill -9"
        case .reducerSkipsWatermark: "SIGSTOP"
        }
    }

    #if EVENTBUS_MUTANTS
    /// The mutant `EVENTBUS_MUTANT` names in this process, read once.
    public static let active: Mutant? = getenv("EVENTBUS_MUTANT").flatMap { Mutant(rawValue: String(cString: $0)) }
    #endif
}
