import DequeModule

/// The EVTs an attached consumer holds unacked, in SEQ order, with what it takes to ack
/// each one in JetStream (`Handle`): a state machine with no I/O.
///
/// EB1's ACK is cumulative (every SEQ up to the one named); JetStream's acks here are
/// explicit, one per message. ``acknowledge(upTo:)`` turns the first into the second.
public struct DeliveryWindow<Handle: Sendable>: Sendable {
    /// The most EVTs unacked (the CONSUME's CREDIT).
    public let credit: Int
    private var inFlight: Deque<(seq: UInt64, handle: Handle)> = []

    public init(credit: Int) { self.credit = credit }

    /// EVTs sent and not acked.
    public var count: Int { inFlight.count }
    /// The SEQs in flight, oldest first.
    public var seqs: [UInt64] { inFlight.map(\.seq) }

    /// Records an EVT about to be sent. `false` (nothing recorded) for a SEQ not above the
    /// last one in flight: JetStream redelivering a message the client still holds, which
    /// is not sent twice (its newer handle replaces the held one).
    public mutating func deliver(_ seq: UInt64, _ handle: Handle) -> Bool {
        if let last = inFlight.last, seq <= last.seq {
            if let index = inFlight.firstIndex(where: { $0.seq == seq }) { inFlight[index].handle = handle }
            return false
        }
        inFlight.append((seq, handle))
        return true
    }

    /// `ACK seq`: removes and returns the handles of every EVT up to `seq`, oldest first.
    public mutating func acknowledge(upTo seq: UInt64) -> [Handle] {
        var acked: [Handle] = []
        while let first = inFlight.first, first.seq <= seq {
            acked.append(first.handle)
            inFlight.removeFirst()
        }
        return acked
    }

    /// Removes and returns every handle: the consumer detaches, its EVTs in flight go back.
    public mutating func drain() -> [Handle] {
        defer { inFlight.removeAll() }
        return inFlight.map(\.handle)
    }
}
