/// What the campaign's durable consumer of `out` did and saw, in order, with the broker's
/// crashes put in between: the history the resume rules are checked on.
public struct ObserverLog: Sendable, Equatable {
    public enum Step: Sendable, Equatable {
        /// A new connection sent `CONSUME` (``start`` `earliest` the first time, `resume` after).
        case attached
        /// An `EVT`.
        case delivered(seq: UInt64, event: [UInt8])
        /// An `ACK` sent.
        case acked(seq: UInt64)
        /// The broker answered a `PING` sent after that ACK on the same connection: it has
        /// taken the ACK (commands of one connection are handled in order).
        case ackTaken(seq: UInt64, at: Double)
        /// The broker crashed at `to`: killed then (`from` = `to`), or its disk failing from
        /// `from` until it stopped. The ACKs it took from ``ResumeRule``'s window before `from`
        /// up to `to` may be lost: offsets are saved ~200 ms after an ACK, and nothing is saved
        /// once the disk fails.
        case brokerCrashed(from: Double, to: Double)
    }

    public var steps: [Step]

    public init(steps: [Step] = []) { self.steps = steps }
}

extension ObserverLog {
    /// How often the observer attached.
    public var attachments: Int { steps.filter { $0 == .attached }.count }

    /// Deliveries of a SEQ it had received before (after a resume: at-least-once).
    public var redelivered: Int {
        var seen = Set<UInt64>()
        return steps.reduce(0) { count, step in
            guard case .delivered(let seq, _) = step else { return count }
            return seen.insert(seq).inserted ? count : count + 1
        }
    }
}
