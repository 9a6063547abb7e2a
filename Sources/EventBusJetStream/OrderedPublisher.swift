import DequeModule
import EventBus

/// The PUBs on their way to JetStream, one atomic batch each, and the order they are
/// stored in: a state machine with no I/O (the gateway feeds it JetStream's answers and
/// the time, and carries out the ``Action``s it returns).
///
/// **One batch per peer at a time.** A peer's PUBs wait in a queue; the next is sent
/// only once the one before it is answered, so a later PUB of a connection is never
/// stored before an earlier one.
///
/// **A failure fences the peer.** A PUB answered `busy` (JetStream refused it, or gave no
/// answer before its deadline) takes the PUBs queued behind it with it (`busy` too,
/// nothing of them sent), and the peer's later PUBs are answered `busy` at once until
/// one arrives that holds the failed PUB's first event (the client resending it, in
/// order) or ``fenceDuration`` passes. So a client that resends what was answered `busy`
/// in the order it published it cannot have a later event stored before an earlier one,
/// even when it pipelines.
///
/// **Duplicates.** JetStream refuses a whole batch when one of its `Nats-Msg-Id`s is
/// stored already (error 10201). Then the PUB's messages are sent again one at a time, in
/// order, each the next once the one before is acked: JetStream answers a stored id with
/// its first sequence and stores the others. Such a PUB (a resend whose commit ack was
/// lost, or events already confirmed mixed with new ones) is not atomic: a failure half
/// way answers it `busy` with its first messages stored (in order; a resend finds them).
public struct OrderedPublisher: Sendable {
    public typealias JobID = UInt64

    /// What the gateway must do.
    public enum Action: Sendable, Equatable {
        /// Publish the job's `messages` (indices into its messages, in order) as one atomic
        /// batch; its answer comes back with `attempt`.
        case sendBatch(job: JobID, attempt: UInt64, messages: [Int])
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

    private enum Phase: Sendable {
        case queued
        case batching(messages: [Int])
        case waiting(due: ContinuousClock.Instant, messages: [Int])
    }

    private struct Job: Sendable {
        let peer: [UInt8]
        let correlation: [UInt8]
        let compact: Bool
        let messageIDs: [String]
        let answers: [Int]
        var seqs: [UInt64?]
        /// Messages still to send one at a time, after a batch was refused for a duplicate.
        var singles: [Int] = []
        var attempt: UInt64 = 0
        var deadline: ContinuousClock.Instant?
        var phase: Phase = .queued
    }

    private struct Fence: Sendable {
        let messageID: String
        let until: ContinuousClock.Instant
    }

    /// How long a PUB waits for JetStream once it is its peer's turn.
    public let timeout: Duration
    /// The pause before sending again what JetStream asked to have again.
    public let retryDelay: Duration
    /// How long a peer's PUBs are refused after a failure unless it resends the failed one.
    public let fenceDuration: Duration

    private var jobs: [JobID: Job] = [:]
    private var queues: [[UInt8]: Deque<JobID>] = [:]
    private var fences: [[UInt8]: Fence] = [:]
    private var nextJob: JobID = 1
    /// Events of the PUBs not answered yet (queued or in flight).
    public private(set) var eventsInFlight = 0

    public init(timeout: Duration, retryDelay: Duration = .milliseconds(20), fenceDuration: Duration = .seconds(30)) {
        self.timeout = timeout
        self.retryDelay = retryDelay
        self.fenceDuration = fenceDuration
    }

    /// PUBs not answered yet.
    public var jobCount: Int { jobs.count }

    /// The message ids of a job, for the gateway's publishing.
    public func messageIDs(of job: JobID) -> [String]? { jobs[job]?.messageIDs }

    /// Takes a PUB from `peer` whose messages have ids `messageIDs` (each once, in order);
    /// `answers` gives for each event of the PUB the message whose sequence answers it.
    public mutating func enqueue(peer: [UInt8], correlation: [UInt8], compact: Bool, messageIDs: [String], answers: [Int],
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
        jobs[id] = Job(peer: peer, correlation: correlation, compact: compact, messageIDs: messageIDs, answers: answers,
                       seqs: Array(repeating: nil, count: messageIDs.count))
        queues[peer, default: []].append(id)
        eventsInFlight += messageIDs.count
        return (id, queues[peer]?.count == 1 ? start(id, now: now) : [])
    }

    /// Records JetStream's answer to the batch sent as `attempt` of `job`; a late answer
    /// (the PUB was answered, or sent again since) is ignored.
    public mutating func batchResult(job id: JobID, attempt: UInt64, _ result: BatchResult,
                                     now: ContinuousClock.Instant) -> [Action] {
        guard var job = jobs[id], job.attempt == attempt, case .batching(let messages) = job.phase else { return [] }
        switch result {
        case .stored(let last):
            guard last >= UInt64(messages.count) else { return fail(id, "JetStream acked the batch with sequence \(last)", now: now) }
            for (offset, index) in messages.enumerated() {
                job.seqs[index] = last - UInt64(messages.count - 1 - offset)
            }
            if !job.singles.isEmpty {
                let next = job.singles.removeFirst()
                jobs[id] = job
                return send(id, messages: [next])
            }
            jobs[id] = job
            return finish(id, now: now)
        case .duplicate:
            guard messages.count > 1 else { return fail(id, "JetStream refused message \(messages[0]) as a duplicate", now: now) }
            job.singles = Array(messages.dropFirst())
            jobs[id] = job
            return send(id, messages: [messages[0]])
        case .retryable:
            job.phase = .waiting(due: now + retryDelay, messages: messages)
            jobs[id] = job
            return []
        case .failed(let reason):
            return fail(id, reason, now: now)
        }
    }

    /// Fails the PUBs whose deadline is not after `now` and sends again what is due.
    public mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        for id in heads {
            guard let job = jobs[id] else { continue }
            if let deadline = job.deadline, deadline <= now {
                actions += fail(id, "JetStream gave no answer within \(timeout) (no quorum, or no server reachable)", now: now)
            } else if case .waiting(let due, let messages) = job.phase, due <= now {
                actions += send(id, messages: messages)
            }
        }
        return actions
    }

    /// The next deadline or retry, for the poll's timeout.
    public var nextWakeup: ContinuousClock.Instant? {
        heads.compactMap { id -> ContinuousClock.Instant? in
            guard let job = jobs[id] else { return nil }
            if case .waiting(let due, _) = job.phase { return min(due, job.deadline ?? due) }
            return job.deadline
        }.min()
    }

    private var heads: [JobID] { queues.values.compactMap(\.first).sorted() }

    private mutating func start(_ id: JobID, now: ContinuousClock.Instant) -> [Action] {
        guard let job = jobs[id] else { return [] }
        jobs[id]?.deadline = now + timeout
        return send(id, messages: Array(job.messageIDs.indices))
    }

    private mutating func send(_ id: JobID, messages: [Int]) -> [Action] {
        guard var job = jobs[id] else { return [] }
        job.attempt += 1
        job.phase = .batching(messages: messages)
        jobs[id] = job
        return [.sendBatch(job: id, attempt: job.attempt, messages: messages)]
    }

    /// Answers `id` (its peer's head) with its sequences and starts the peer's next PUB.
    private mutating func finish(_ id: JobID, now: ContinuousClock.Instant) -> [Action] {
        guard let job = remove(id) else { return [] }
        let seqs = job.answers.map { job.seqs[$0] ?? 0 }
        var actions: [Action] = [.reply(PubReply(peer: job.peer, correlation: job.correlation,
                                                           outcome: .confirmed(seqs, compact: job.compact)))]
        if let next = queues[job.peer]?.first { actions += start(next, now: now) }
        return actions
    }

    /// Answers `id` `busy`, and every PUB of its peer queued behind it, and fences the peer.
    private mutating func fail(_ id: JobID, _ reason: String, now: ContinuousClock.Instant) -> [Action] {
        guard let job = remove(id) else { return [] }
        let error = BusError(.busy, "event 0: JetStream did not store the batch (\(reason)); nothing of it is stored unless "
            + "JetStream stored it after all; resend it with the same events, then the PUBs after it")
        var actions: [Action] = [.reply(PubReply(peer: job.peer, correlation: job.correlation, outcome: .failed(error)))]
        while let next = queues[job.peer]?.first, let queued = remove(next) {
            let behind = BusError(.busy, "event 0: not sent because an earlier PUB of this connection was answered busy; "
                + "resend that PUB first, then this one")
            actions.append(.reply(PubReply(peer: queued.peer, correlation: queued.correlation, outcome: .failed(behind))))
        }
        if let first = job.messageIDs.first { fences[job.peer] = Fence(messageID: first, until: now + fenceDuration) }
        return actions
    }

    private mutating func remove(_ id: JobID) -> Job? {
        guard let job = jobs.removeValue(forKey: id) else { return nil }
        queues[job.peer]?.removeAll { $0 == id }
        if queues[job.peer]?.isEmpty == true { queues[job.peer] = nil }
        eventsInFlight -= job.messageIDs.count
        return job
    }
}
