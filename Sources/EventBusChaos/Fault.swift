/// The one fault a round injects.
public enum Fault: Sendable, Equatable, CustomStringConvertible {
    /// SIGKILL; the campaign restarts what the supervisor does not.
    case kill(FaultTarget)
    /// SIGSTOP, then SIGCONT after this many milliseconds.
    case stop(FaultTarget, milliseconds: Int)
    /// A power loss: every client frozen, the broker's `durable_seq` read, the whole tree
    /// SIGKILLed, and the last segment cut at this fraction of the bytes past the end of the
    /// last durable record.
    case tornTail(fraction: Double)
    /// A failing disk: from the fault's moment every fsync and fdatasync of `eventbus up` and
    /// its plugins fails with EIO (an LD_PRELOAD shim); the broker stops without confirming
    /// more and logs its `durable_seq`; the pages written after it are dropped at this
    /// fraction of their bytes ("fsyncgate"); then `eventbus up` starts on a good disk.
    case failingFsync(fraction: Double)
    /// A full disk: the round's directory is a small filesystem of its own (a tmpfs); from
    /// the fault's moment a filler file takes all its free space for this many milliseconds,
    /// then is deleted. Every write of `eventbus up` and its plugins fails with ENOSPC
    /// meanwhile: the broker answers `busy` and appends nothing; nothing confirmed is lost.
    case diskFull(milliseconds: Int)
    /// The broker's wall clock jumps by this many seconds (forwards or backwards) and stays
    /// there: the clock `eventbus up` runs on is moved by a file (`EVENTBUS_CLOCK_SKEW_FILE`);
    /// timers and timeouts run on the monotonic clock, which does not jump.
    case clockJump(seconds: Int)

    /// The fault's kind for the campaign's table: `kill -9 <target>`, `SIGSTOP <target>`, `torn tail`.
    public var kind: String {
        switch self {
        case .kill(let target): "kill -9 \(Self.kindName(target))"
        case .stop(let target, _): "SIGSTOP \(Self.kindName(target))"
        case .tornTail: "torn tail"
        case .failingFsync: "failing fsync"
        case .diskFull: "disk full"
        case .clockJump: "clock jump"
        }
    }

    private static func kindName(_ target: FaultTarget) -> String {
        if case .publisher = target { return "publisher" }
        return target.description
    }

    public var description: String {
        switch self {
        case .kill(let target): "kill -9 \(target)"
        case .stop(let target, let milliseconds): "SIGSTOP \(target) for \(milliseconds) ms"
        case .tornTail(let fraction): "torn tail at \(Int(fraction * 100)) % of the bytes past the last durable record"
        case .failingFsync(let fraction): "failing fsync, then \(Int(fraction * 100)) % of the bytes past the last durable record kept"
        case .diskFull(let milliseconds): "disk full for \(milliseconds) ms"
        case .clockJump(let seconds): "clock jump of \(seconds > 0 ? "+" : "")\(seconds) s"
        }
    }
}
