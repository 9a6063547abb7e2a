import DequeModule
import EventBus

/// The PUBs in flight to JetStream and the order their answers leave in: a state machine
/// with no I/O (the gateway feeds it acks and the time, and sends what it returns).
///
/// Each PUB is a batch of events, published one message each. A batch is answered once
/// every event has its ack: `OK` with the stream sequences, or `busy` if any event failed
/// or the batch's deadline passed first (JetStream gave no ack within the request
/// timeout). Answers go to each peer in the order of its PUBs: a finished batch waits for
/// the earlier ones of the same peer. An ack that comes after its batch was answered is
/// ignored.
public struct ConfirmQueue: Sendable {
    /// The handle of one event of one batch, given back with its ack.
    public struct Ticket: Sendable, Hashable {
        public let batch: UInt64
        public let index: Int
    }

    /// An answer to send.
    public struct Reply: Sendable, Equatable {
        public var peer: [UInt8]
        public var correlation: [UInt8]
        public var outcome: Outcome

        public init(peer: [UInt8], correlation: [UInt8], outcome: Outcome) {
            self.peer = peer
            self.correlation = correlation
            self.outcome = outcome
        }
    }

    public enum Outcome: Sendable, Equatable {
        /// Every event stored: their stream sequences, in event order; `compact` asks for
        /// them in one frame.
        case confirmed([UInt64], compact: Bool)
        case failed(BusError)
    }

    private struct Batch: Sendable {
        let peer: [UInt8]
        let correlation: [UInt8]
        let compact: Bool
        let deadline: ContinuousClock.Instant
        /// For each event of the PUB, the message whose sequence answers it.
        let answers: [Int]
        var seqs: [UInt64?]
        var missing: Int
        var failure: BusError?
        var outcome: Outcome? {
            if let failure { return .failed(failure) }
            return missing == 0 ? .confirmed(answers.map { seqs[$0] ?? 0 }, compact: compact) : nil
        }
    }

    private var batches: [UInt64: Batch] = [:]
    /// Each peer's batches, oldest first.
    private var order: [[UInt8]: Deque<UInt64>] = [:]
    private var nextBatch: UInt64 = 1
    /// Events published and not acked yet (of batches not answered yet).
    public private(set) var eventsInFlight = 0

    public init() {}

    /// Batches not answered yet.
    public var batchCount: Int { batches.count }

    /// Registers a PUB from `peer` published as `count` messages; returns one ticket per
    /// message, to give back with its ack.
    ///
    /// - Parameter answers: For each event of the PUB, the message (0..<count) whose
    ///   sequence answers it; `nil` when each event is its own message.
    public mutating func enqueue(peer: [UInt8], correlation: [UInt8], count: Int, answers: [Int]? = nil, compact: Bool,
                                 deadline: ContinuousClock.Instant) -> [Ticket] {
        let id = nextBatch
        nextBatch += 1
        batches[id] = Batch(peer: peer, correlation: correlation, compact: compact, deadline: deadline,
                            answers: answers ?? Array(0..<count), seqs: Array(repeating: nil, count: count), missing: count)
        order[peer, default: []].append(id)
        eventsInFlight += count
        return (0..<count).map { Ticket(batch: id, index: $0) }
    }

    /// Records the ack (a stream sequence) or failure of one event; returns the answers
    /// that can go now.
    public mutating func complete(_ ticket: Ticket, _ result: Result<UInt64, BusError>) -> [Reply] {
        guard var batch = batches[ticket.batch], ticket.index < batch.seqs.count, batch.seqs[ticket.index] == nil,
              batch.missing > 0
        else { return [] }
        switch result {
        case .success(let seq):
            batch.seqs[ticket.index] = seq
            batch.missing -= 1
            eventsInFlight -= 1
        case .failure(let error):
            if batch.failure == nil { batch.failure = error }
            // The batch is answered `busy` now; its other acks no longer count.
            eventsInFlight -= batch.missing
            batch.missing = 0
        }
        batches[ticket.batch] = batch
        return release(batch.peer)
    }

    /// Fails every batch whose deadline is not after `now` (`busy`); returns the answers that
    /// can go now.
    public mutating func expire(now: ContinuousClock.Instant, _ error: (Int) -> BusError) -> [Reply] {
        var peers: Set<[UInt8]> = []
        for (id, batch) in batches where batch.deadline <= now && batch.outcome == nil {
            var failed = batch
            let position = batch.answers.firstIndex { batch.seqs[$0] == nil } ?? 0
            failed.failure = error(position)
            eventsInFlight -= failed.missing
            failed.missing = 0
            batches[id] = failed
            peers.insert(batch.peer)
        }
        return peers.sorted { $0.lexicographicallyPrecedes($1) }.flatMap { release($0) }
    }

    /// The batches still waiting for acks.
    public var waitingBatches: [UInt64] {
        batches.filter { $0.value.outcome == nil }.map(\.key)
    }

    /// The earliest deadline of a batch still waiting, for the poll's timeout.
    public var nextDeadline: ContinuousClock.Instant? {
        batches.values.filter { $0.outcome == nil }.map(\.deadline).min()
    }

    /// Pops `peer`'s answered batches from the front of its queue, in order.
    private mutating func release(_ peer: [UInt8]) -> [Reply] {
        var replies: [Reply] = []
        while let id = order[peer]?.first, let batch = batches[id], let outcome = batch.outcome {
            order[peer]?.removeFirst()
            batches[id] = nil
            replies.append(Reply(peer: peer, correlation: batch.correlation, outcome: outcome))
        }
        if order[peer]?.isEmpty == true { order[peer] = nil }
        return replies
    }
}
