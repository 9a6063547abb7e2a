/// Where a durable consumer starts reading the log (the `START` argument of `CONSUME`).
public enum ConsumeStart: Sendable, Equatable, CustomStringConvertible {
    /// The oldest event still in the log.
    case earliest
    /// The next event appended after the `CONSUME` (head SEQ + 1).
    case latest
    /// After the consumer's last ACK, or the earliest event if it never acked.
    case resume
    /// The event with this SEQ (or the first after it that matches).
    case seq(UInt64)

    /// The argument as it travels on the wire: `earliest`, `latest`, `resume` or a decimal SEQ.
    public var wire: String {
        switch self {
        case .earliest: "earliest"
        case .latest: "latest"
        case .resume: "resume"
        case .seq(let seq): String(seq)
        }
    }

    /// Parses the wire spelling; `nil` for anything else.
    public init?(wire: String) {
        switch wire {
        case "earliest": self = .earliest
        case "latest": self = .latest
        case "resume": self = .resume
        default:
            guard let seq = UInt64(wire) else { return nil }
            self = .seq(seq)
        }
    }

    /// The wire spelling.
    public var description: String { wire }
}
