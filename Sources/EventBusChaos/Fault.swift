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

    /// The fault's kind for the campaign's table: `kill -9 <target>`, `SIGSTOP <target>`, `torn tail`.
    public var kind: String {
        switch self {
        case .kill(let target): "kill -9 \(Self.kindName(target))"
        case .stop(let target, _): "SIGSTOP \(Self.kindName(target))"
        case .tornTail: "torn tail"
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
        }
    }
}
