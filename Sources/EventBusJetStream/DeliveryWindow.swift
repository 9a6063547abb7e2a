import DequeModule

/// The EVTs an attached consumer holds unacked, in SEQ order, with what it takes to ack
/// each one in JetStream (`Handle`), and the order JetStream's deliveries must keep to
/// become EVTs: a state machine with no I/O.
///
/// EB1's ACK is cumulative (every SEQ up to the one named); JetStream's acks here are
/// explicit, one per message. ``acknowledge(upTo:)`` turns the first into the second.
///
/// **No SEQ is left out.** EB1 gives a consumer every event of its stage in SEQ order; a
/// plugin folds them so. A JetStream pull consumer delivers in stream order only while no
/// delivery is lost on its way: one lost with the gateway's connection or with the
/// consumer's leader, or taken by a fetch of a previous attachment still under way, comes
/// again only after the ack wait (30 s), while the later ones keep coming. So
/// ``arrive(_:delivery:redelivered:forClient:_:)`` lets through only the SEQ due next
/// (``next``), and a later one only when JetStream cannot have skipped an event this
/// window did not see: when the consumer was made by this attachment and every delivery
/// since (JetStream numbers them, redeliveries included: the consumer sequence) came here
/// — then the SEQs skipped are not in the stream (deleted) or not on its subject. Anything
/// else is a ``Arrival/gap(restartAt:)``: nothing of it is sent, and the consumer must be
/// made again at the first SEQ the client has not acked, so that JetStream delivers the
/// missing events now, in order, instead of after the ack wait and after later ones.
public struct DeliveryWindow<Handle: Sendable>: Sendable {
    /// The most EVTs unacked (the CONSUME's CREDIT).
    public let credit: Int
    private var inFlight: Deque<(seq: UInt64, handle: Handle, round: UInt64)> = []
    /// The keep-alive round now (``staleHandles()``): each EVT remembers the round it was sent in.
    private var round: UInt64 = 0
    /// The SEQ due next: every one before it was sent to the client or passed over.
    public private(set) var next: UInt64 = 1
    /// The consumer sequence of the last delivery seen.
    private var lastDelivery: UInt64 = 0
    /// Whether every delivery of the JetStream consumer came here: it was made for this
    /// window (not bound as it was) and no consumer sequence was skipped since.
    private var seenEveryDelivery = false

    /// What to do with a delivery.
    public enum Arrival: Sendable, Equatable {
        /// The SEQ due next, for the client: recorded, send it as an EVT.
        case send
        /// The SEQ due next, not for the client (another prefix, not an event): ack it.
        case pass
        /// A redelivery of an EVT the client holds: not sent twice; its newer handle replaces the held one.
        case held
        /// A redelivery of a SEQ the client acked or that was passed over: ack it again.
        case repeated
        /// Deliveries were lost before this one: it is not sent, nor anything after it from
        /// this consumer, which must be made again to deliver from `restartAt`.
        case gap(restartAt: UInt64)
    }

    public init(credit: Int) { self.credit = credit }

    /// EVTs sent and not acked.
    public var count: Int { inFlight.count }
    /// The SEQs in flight, oldest first.
    public var seqs: [UInt64] { inFlight.map(\.seq) }
    /// The handles of the EVTs sent before the previous call, oldest first, then a new
    /// round begins: what to mark in progress, called every third of the ack wait, so that
    /// JetStream does not deliver again what the client holds. An EVT acked within a round
    /// or two (the usual case) is never marked; one held longer is marked each round, at
    /// most two thirds of the ack wait after it was sent or last marked.
    public mutating func staleHandles() -> [Handle] {
        defer { round += 1 }
        var stale: [Handle] = []
        for entry in inFlight where entry.round < round { stale.append(entry.handle) }
        return stale
    }

    /// The JetStream consumer is ready and delivers from `first`; `made` when it was made
    /// for this attachment (or made again after a gap), false when an existing one was
    /// bound as it was (`resume`), whose earlier deliveries went elsewhere.
    public mutating func started(first: UInt64, made: Bool) {
        next = max(next, first)  // a consumer made again starts at or before it
        lastDelivery = 0
        seenEveryDelivery = made
    }

    /// Where a delivery stands: stream sequence `seq`, consumer sequence `delivery`,
    /// `redelivered` when JetStream delivered it before; `forClient` when the consumer's
    /// prefixes take it.
    public mutating func arrive(_ seq: UInt64, delivery: UInt64, redelivered: Bool, forClient: Bool,
                                _ handle: Handle) -> Arrival {
        let unbroken = seenEveryDelivery && delivery == lastDelivery + 1
        if delivery > lastDelivery + 1 { seenEveryDelivery = false }
        lastDelivery = delivery
        if seq < next {
            if let index = inFlight.firstIndex(where: { $0.seq == seq }) {
                inFlight[index].handle = handle
                return .held
            }
            return .repeated
        }
        if seq > next {
            guard unbroken && !redelivered else { return .gap(restartAt: inFlight.first?.seq ?? next) }
            // Every delivery came here, in order: the SEQs between are not the consumer's.
        }
        next = seq + 1
        guard forClient else { return .pass }
        inFlight.append((seq, handle, round))
        return .send
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

    /// Whether `ACK seq` is beyond every SEQ sent or passed over: then delivery skips ahead
    /// (docs/protocol.md "ACK"), by making the consumer again after `seq`. Call it after
    /// ``acknowledge(upTo:)``; nothing is then in flight. The window itself moves on when the
    /// new consumer starts (``started(first:made:)``).
    public func skipsAhead(_ seq: UInt64) -> Bool {
        seq >= next
    }

    /// Removes and returns every handle: the consumer detaches, its EVTs in flight go back.
    public mutating func drain() -> [Handle] {
        defer { inFlight.removeAll() }
        return inFlight.map(\.handle)
    }
}
