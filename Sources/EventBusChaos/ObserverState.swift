/// The decisions of the campaign's observer (a durable consumer of `out`), as a value with no
/// socket: it is told what arrived and what time it is, and says what to send. The runner
/// (`OutObserver`) does the I/O and records the history.
///
/// - ACK the last event after every ``ackEvery`` deliveries, or once ``ackAfterQuiet`` passed
///   with nothing arriving, and PING after it (its answer says the broker took the ACK);
///   never a new ACK while a PING is unanswered.
/// - Attach again, on a new connection with `resume`, when a PING or the CONSUME stayed
///   unanswered ``answerTimeout``, when the broker refused (ERR to an ACK: the connection no
///   longer holds the consumer; END: taken over), or, with nothing ever received, after
///   ``idleProbe`` of quiet; with something received, that quiet sends its ACK again (no
///   reply if it still holds the consumer, ERR if not).
/// - Stopping: ACK the last event, wait for the PING's answer (``answerTimeout`` at most), finish.
public struct ObserverState: Sendable {
    public static let ackEvery = 50
    public static let ackAfterQuiet = 0.1
    public static let answerTimeout = 3.0
    public static let idleProbe = 1.0

    public enum Action: Sendable, Equatable {
        /// Close the connection, open a new one and send CONSUME (`earliest` the first time, then `resume`).
        case attach
        /// Send `ACK seq`, then a PING whose CORR names `seq`.
        case ack(UInt64)
        /// Stop: the last ACK was taken, or its answer is not coming.
        case finish
    }

    private(set) public var attachments = 0
    private(set) public var lastDelivered: UInt64?
    private var unacked = 0
    /// The ACK whose PING is unanswered, and when it was sent.
    private var ping: (seq: UInt64, at: Double)?
    private var consumeSentAt: Double?
    private var lastArrival: Double
    private var stoppingSince: Double?

    public init(now: Double) { lastArrival = now }

    /// Whether the next CONSUME starts at `earliest` (never attached before) or `resume`.
    public var startsEarliest: Bool { attachments == 0 }

    /// The runner attached (sent CONSUME on a new connection).
    public mutating func attached(now: Double) {
        attachments += 1
        consumeSentAt = now
        ping = nil
        unacked = 0
        lastArrival = now
    }

    /// The runner sent `ACK seq` and its PING.
    public mutating func acked(_ seq: UInt64, now: Double) {
        ping = (seq, now)
        unacked = 0
    }

    /// An EVT.
    public mutating func delivered(_ seq: UInt64, now: Double) -> [Action] {
        lastArrival = now
        lastDelivered = seq
        unacked += 1
        return decide(now: now)
    }

    /// The OK to the CONSUME.
    public mutating func consumeAnswered(now: Double) -> [Action] {
        lastArrival = now
        consumeSentAt = nil
        return decide(now: now)
    }

    /// The OK to the PING sent after `ACK seq`; true if it is the one awaited (the ACK is taken).
    public mutating func pingAnswered(_ seq: UInt64, now: Double) -> (taken: Bool, actions: [Action]) {
        lastArrival = now
        guard ping?.seq == seq else { return (false, decide(now: now)) }
        ping = nil
        return (true, decide(now: now))
    }

    /// An ERR or END: this connection does not hold the consumer (any more).
    public mutating func refused(now: Double) -> [Action] {
        lastArrival = now
        return stoppingSince == nil ? [.attach] : decide(now: now)
    }

    /// Nothing arrived for a while.
    public mutating func tick(now: Double) -> [Action] { decide(now: now) }

    /// The campaign asks it to stop.
    public mutating func stop(now: Double) -> [Action] {
        guard stoppingSince == nil else { return decide(now: now) }
        stoppingSince = now
        if let lastDelivered { return [.ack(lastDelivered)] }
        return [.finish]
    }

    private func decide(now: Double) -> [Action] {
        if let stoppingSince {
            return ping == nil || now - stoppingSince > Self.answerTimeout ? [.finish] : []
        }
        if let ping, now - ping.at > Self.answerTimeout { return [.attach] }
        if let sent = consumeSentAt, now - sent > Self.answerTimeout { return [.attach] }
        guard ping == nil, consumeSentAt == nil else { return [] }
        let quiet = now - lastArrival
        if unacked > 0, let lastDelivered, unacked >= Self.ackEvery || quiet > Self.ackAfterQuiet { return [.ack(lastDelivered)] }
        if unacked == 0, quiet > Self.idleProbe { return [lastDelivered.map { .ack($0) } ?? .attach] }
        return []
    }
}
