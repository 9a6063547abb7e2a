import DequeModule
import EventBus

/// The PUBs on their way to JetStream, in atomic batches, and the order they are stored
/// in: a state machine with no I/O (the gateway feeds it JetStream's answers and the time,
/// and carries out the ``Action``s it returns).
///
/// **One atomic batch per peer at a time, carrying every PUB it has queued.** A peer's
/// PUBs wait in a queue. When the peer has no batch in flight, the PUBs at the head of its
/// queue go out together as one atomic batch (a *flight*: consecutive PUBs to the same
/// stage, at most ``maxBatchMessages`` messages and ``maxBatchBytes`` bytes, no message id
/// twice); the PUBs that arrive meanwhile form the next flight once this one is answered.
/// So a connection that pipelines N PUBs pays one JetStream commit round trip for up to
/// N of them (a group commit), and a later PUB of a connection is still never stored
/// before an earlier one: JetStream stores a flight whole or not at all, and the next
/// flight leaves only once it is stored. Two batches of one writer in flight at once
/// could be stored out of order around a leader change (the first lost with the old
/// leader, the second stored by the new one), and JetStream 2.15 has no header that makes
/// a batch conditional on an earlier one still unanswered; hence one flight at a time.
///
/// **A failure fences the peer.** A flight answered `busy` (JetStream refused it, or gave
/// no answer before the deadline of its first PUB) takes every PUB of the peer with it
/// (`busy`, nothing of them stored), and the peer's later PUBs are answered `busy` at once
/// until one arrives that holds the failed flight's first event (the client resending it,
/// in order) or ``fenceDuration`` passes. So a client that resends what was answered
/// `busy` in the order it published it cannot have a later event stored before an earlier
/// one, even when it pipelines.
///
/// **Duplicates.** JetStream refuses a whole batch when one of its `Nats-Msg-Id`s is
/// stored already (error 10201). Then the flight's messages are sent again one at a time,
/// in order, each the next once the one before is acked: JetStream answers a stored id
/// with its first sequence and stores the others. Such a flight (a resend whose commit
/// ack was lost, or events already confirmed mixed with new ones) is not atomic: a
/// failure half way confirms its PUBs stored whole and answers the rest `busy`, the first
/// of them with a prefix stored (in order; a resend finds it).
public struct OrderedPublisher: Sendable {
    public typealias JobID = UInt64

    /// One message of one PUB: its index in the PUB's messages.
    public struct Part: Sendable, Hashable {
        public var job: JobID
        public var message: Int
        public init(job: JobID, message: Int) {
            self.job = job
            self.message = message
        }
    }

    /// What the gateway must do.
    public enum Action: Sendable, Equatable {
        /// Publish `parts` (all to the same stream, in order) as one atomic batch; its answer
        /// comes back with `flight` and `attempt`.
        case sendBatch(flight: JobID, attempt: UInt64, parts: [Part])
        /// Answer a PUB.
        case reply(PubReply)
    }

    /// JetStream's answer to a batch.
    public enum BatchResult: Sendable, Equatable {
        /// Stored: the sequence of its last message (the others have those before it).
        case stored(lastSequence: UInt64)
        /// Refused because a message's id is stored already; nothing stored.
        case duplicate
        /// Refused, nothing stored, and worth sending again shortly (a leader change, an
        /// id still being replicated, too many batches in flight).
        case retryable(String)
        /// Failed; whether anything was stored is not known (a timeout) or nothing was.
        case failed(String)
    }

    private struct Job: Sendable {
        let peer: [UInt8]
        let correlation: [UInt8]
        let compact: Bool
        let stream: String
        let bytes: Int
        let messageIDs: [String]
        let answers: [Int]
        var seqs: [UInt64?]
        var deadline: ContinuousClock.Instant?
    }

    /// The batch a peer has on its way: the PUBs it carries, and what is sent now.
    private struct Flight: Sendable {
        /// Its PUBs, in order; the first names the flight.
        let jobs: [JobID]
        var attempt: UInt64 = 0
        /// The messages of the batch sent as `attempt`.
        var sending: [Part] = []
        /// Messages still to send one at a time, after a batch was refused for a duplicate.
        var singles: Deque<Part> = []
        /// When to send `sending` again, after a retryable refusal.
        var retryAt: ContinuousClock.Instant?
    }

    private struct Fence: Sendable {
        let messageID: String
        let until: ContinuousClock.Instant
    }

    /// How long a PUB waits for JetStream once it is in a flight.
    public let timeout: Duration
    /// The pause before sending again what JetStream asked to have again.
    public let retryDelay: Duration
    /// How long a peer's PUBs are refused after a failure unless it resends the failed one.
    public let fenceDuration: Duration
    /// The most messages in one flight (nats-server's `max_msgs` of an atomic batch: 1,000).
    public let maxBatchMessages: Int
    /// The most bytes of events in one flight, unless a single PUB has more.
    public let maxBatchBytes: Int

    private var jobs: [JobID: Job] = [:]
    private var queues: [[UInt8]: Deque<JobID>] = [:]
    private var flights: [[UInt8]: Flight] = [:]
    private var fences: [[UInt8]: Fence] = [:]
    private var nextJob: JobID = 1
    /// Events of the PUBs not answered yet (queued or in flight).
    public private(set) var eventsInFlight = 0
    /// Flights sent so far and the PUBs they carried, for the logs and STATS.
    public private(set) var flightsStarted = 0
    public private(set) var pubsInFlights = 0

    public init(timeout: Duration, retryDelay: Duration = .milliseconds(20), fenceDuration: Duration = .seconds(30),
                maxBatchMessages: Int = 1_000, maxBatchBytes: Int = WireProtocol.maxBatchBytes) {
        self.timeout = timeout
        self.retryDelay = retryDelay
        self.fenceDuration = fenceDuration
        self.maxBatchMessages = maxBatchMessages
        self.maxBatchBytes = maxBatchBytes
    }

    /// PUBs not answered yet.
    public var jobCount: Int { jobs.count }

    /// The message ids of a job, for the gateway's publishing.
    public func messageIDs(of job: JobID) -> [String]? { jobs[job]?.messageIDs }

    /// The messages sent as `attempt` of `flight`, while its answer is awaited.
    public func parts(of flight: JobID, attempt: UInt64) -> [Part]? {
        guard let peer = jobs[flight]?.peer, let current = flights[peer], current.jobs.first == flight,
              current.attempt == attempt, current.retryAt == nil else { return nil }
        return current.sending
    }

    /// Takes a PUB from `peer` to `stream` whose messages have ids `messageIDs` (each once,
    /// in order) and `bytes` bytes in all; `answers` gives for each event of the PUB the
    /// message whose sequence answers it.
    public mutating func enqueue(peer: [UInt8], correlation: [UInt8], compact: Bool, stream: String = "",
                                 messageIDs: [String], bytes: Int = 0, answers: [Int],
                                 now: ContinuousClock.Instant) -> (JobID?, [Action]) {
        if let fence = fences[peer] {
            if now < fence.until && !messageIDs.contains(fence.messageID) {
                let error = BusError(.busy, "event 0: not stored because an earlier PUB of this connection was answered busy "
                    + "(its first event has Nats-Msg-Id \(fence.messageID)); resend that PUB first, then this one")
                return (nil, [.reply(PubReply(peer: peer, correlation: correlation, outcome: .failed(error)))])
            }
            fences[peer] = nil
        }
        let id = nextJob
        nextJob += 1
        jobs[id] = Job(peer: peer, correlation: correlation, compact: compact, stream: stream, bytes: bytes,
                       messageIDs: messageIDs, answers: answers, seqs: Array(repeating: nil, count: messageIDs.count))
        queues[peer, default: []].append(id)
        eventsInFlight += messageIDs.count
        return (id, flights[peer] == nil ? startFlight(peer, now: now) : [])
    }

    /// Records JetStream's answer to the batch sent as `attempt` of `flight`; a late answer
    /// (the PUBs were answered, or sent again since) is ignored.
    public mutating func batchResult(flight id: JobID, attempt: UInt64, _ result: BatchResult,
                                     now: ContinuousClock.Instant) -> [Action] {
        guard let peer = jobs[id]?.peer, var flight = flights[peer], flight.jobs.first == id,
              flight.attempt == attempt, flight.retryAt == nil else { return [] }
        let sent = flight.sending
        switch result {
        case .stored(let last):
            guard last >= UInt64(sent.count) else { return fail(peer, "JetStream acked the batch with sequence \(last)", now: now) }
            for (offset, part) in sent.enumerated() {
                jobs[part.job]?.seqs[part.message] = last - UInt64(sent.count - 1 - offset)
            }
            if let next = flight.singles.popFirst() {
                flights[peer] = flight
                return send(peer, [next])
            }
            return finish(peer, now: now)
        case .duplicate:
            guard sent.count > 1 else { return fail(peer, "JetStream refused message \(sent[0].message) as a duplicate", now: now) }
            flight.singles = Deque(sent.dropFirst())
            flights[peer] = flight
            return send(peer, [sent[0]])
        case .retryable:
            flight.retryAt = now + retryDelay
            flights[peer] = flight
            return []
        case .failed(let reason):
            return fail(peer, reason, now: now)
        }
    }

    /// Fails the flights whose first PUB's deadline is not after `now` and sends again what is due.
    public mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        for peer in flights.keys.sorted(by: { flights[$0]!.jobs[0] < flights[$1]!.jobs[0] }) {
            guard let flight = flights[peer] else { continue }
            if let deadline = jobs[flight.jobs[0]]?.deadline, deadline <= now {
                actions += fail(peer, "JetStream gave no answer within \(timeout) (no quorum, or no server reachable)", now: now)
            } else if let due = flight.retryAt, due <= now {
                actions += send(peer, flight.sending)
            }
        }
        return actions
    }

    /// The next deadline or retry, for the poll's timeout.
    public var nextWakeup: ContinuousClock.Instant? {
        flights.values.compactMap { flight -> ContinuousClock.Instant? in
            let deadline = jobs[flight.jobs[0]]?.deadline
            guard let due = flight.retryAt else { return deadline }
            return min(due, deadline ?? due)
        }.min()
    }

    /// Starts the peer's next flight: the PUBs at the head of its queue that fit in one batch.
    private mutating func startFlight(_ peer: [UInt8], now: ContinuousClock.Instant) -> [Action] {
        guard let queue = queues[peer], let head = queue.first, let first = jobs[head] else { return [] }
        var members: [JobID] = []
        var parts: [Part] = []
        var bytes = 0
        var ids: Set<String> = []
        for id in queue {
            guard let job = jobs[id] else { continue }
            if !members.isEmpty {
                guard job.stream == first.stream, parts.count + job.messageIDs.count <= maxBatchMessages,
                      bytes + job.bytes <= maxBatchBytes, ids.isDisjoint(with: job.messageIDs) else { break }
            }
            members.append(id)
            parts += job.messageIDs.indices.map { Part(job: id, message: $0) }
            bytes += job.bytes
            ids.formUnion(job.messageIDs)
            if jobs[id]?.deadline == nil { jobs[id]?.deadline = now + timeout }
        }
        flights[peer] = Flight(jobs: members)
        flightsStarted += 1
        pubsInFlights += members.count
        return send(peer, parts)
    }

    private mutating func send(_ peer: [UInt8], _ parts: [Part]) -> [Action] {
        guard var flight = flights[peer] else { return [] }
        flight.attempt += 1
        flight.sending = parts
        flight.retryAt = nil
        flights[peer] = flight
        return [.sendBatch(flight: flight.jobs[0], attempt: flight.attempt, parts: parts)]
    }

    /// Answers the peer's flight with its sequences and starts its next.
    private mutating func finish(_ peer: [UInt8], now: ContinuousClock.Instant) -> [Action] {
        guard let flight = flights.removeValue(forKey: peer) else { return [] }
        var actions: [Action] = []
        for id in flight.jobs {
            guard let job = remove(id) else { continue }
            actions.append(.reply(confirmation(job)))
        }
        return actions + startFlight(peer, now: now)
    }

    private func confirmation(_ job: Job) -> PubReply {
        let seqs = job.answers.map { job.seqs[$0] ?? 0 }
        return PubReply(peer: job.peer, correlation: job.correlation, outcome: .confirmed(seqs, compact: job.compact))
    }

    /// Answers the peer's flight: its PUBs stored whole (sent one message at a time after a
    /// duplicate) are confirmed, the first that is not and every PUB after it `busy`, and
    /// the peer is fenced until it resends that first one.
    private mutating func fail(_ peer: [UInt8], _ reason: String, now: ContinuousClock.Instant) -> [Action] {
        guard let flight = flights.removeValue(forKey: peer) else { return [] }
        var actions: [Action] = []
        var failed: Job?
        for id in flight.jobs {
            guard let job = remove(id) else { continue }
            if failed == nil && job.seqs.allSatisfy({ $0 != nil }) {
                actions.append(.reply(confirmation(job)))
                continue
            }
            if failed == nil {
                failed = job
                let error = BusError(.busy, "event 0: JetStream did not store the batch (\(reason)); nothing of it is stored unless "
                    + "JetStream stored it after all; resend it with the same events, then the PUBs after it")
                actions.append(.reply(PubReply(peer: job.peer, correlation: job.correlation, outcome: .failed(error))))
            } else {
                actions.append(.reply(PubReply(peer: job.peer, correlation: job.correlation, outcome: .failed(Self.sameBatch))))
            }
        }
        while let next = queues[peer]?.first, let queued = remove(next) {
            actions.append(.reply(PubReply(peer: queued.peer, correlation: queued.correlation, outcome: .failed(Self.behind))))
        }
        if let first = failed?.messageIDs.first { fences[peer] = Fence(messageID: first, until: now + fenceDuration) }
        return actions
    }

    private static let sameBatch = BusError(.busy, "event 0: sent in one atomic batch with an earlier PUB of this connection, "
        + "which was answered busy; resend that PUB first, then this one")
    private static let behind = BusError(.busy, "event 0: not stored because an earlier PUB of this connection was answered busy; "
        + "resend that PUB first, then this one")

    private mutating func remove(_ id: JobID) -> Job? {
        guard let job = jobs.removeValue(forKey: id) else { return nil }
        queues[job.peer]?.removeAll { $0 == id }
        if queues[job.peer]?.isEmpty == true { queues[job.peer] = nil }
        eventsInFlight -= job.messageIDs.count
        return job
    }
}
