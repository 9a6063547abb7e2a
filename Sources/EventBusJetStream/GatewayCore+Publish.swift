import EventBus
import NATS

extension GatewayCore {
    /// PUB (and PUBS, unbatched): checked as the broker checks it, then handed to the
    /// ``OrderedPublisher``, which sends it in an atomic batch with the PUBs of the peer
    /// queued before it once the peer's earlier batch is answered.
    func handlePub(_ message: CommandMessage) throws(BusError) {
        let plan = try PublishPlan.make(message, stages: config.stages, maxEventBytes: config.maxEventBytes) {
            TimeStamp.rfc3339(TimeStamp.wallMilliseconds())
        }
        let (job, actions) = publisher.enqueue(peer: message.peer, correlation: message.correlation,
                                               compact: compactPeers.contains(message.peer), stream: plan.stream.name,
                                               messageIDs: plan.events.map(\.messageID),
                                               bytes: plan.events.reduce(0) { $0 + $1.payload.count },
                                               answers: plan.answers, now: clock.now)
        if let job { outgoing[job] = Outgoing(subject: plan.stream.subject, events: plan.events) }
        perform(actions)
    }

    func batchAnswered(_ flight: OrderedPublisher.JobID, _ attempt: UInt64, _ result: Result<PubAck, NATSError>) {
        let answer = JetStreamAnswer.batch(result)
        if case .failed(let reason) = answer { logger.warning("JetStream refused a batch", metadata: ["error.type": "\(reason)"]) }
        if case .success = result, let parts = publisher.parts(of: flight, attempt: attempt) {
            forwardAnswers(of: parts.compactMap { part in outgoing[part.job].map { ($0.subject, $0.events[part.message]) } })
        }
        perform(publisher.batchResult(flight: flight, attempt: attempt, answer, now: clock.now))
    }

    /// Fails the PUBs whose deadline passed and sends again what is due.
    func tick() {
        perform(publisher.tick(now: clock.now))
        if !requests.isEmpty { expireRequests() }
        keepHeldAlive()
        zap?.tick()
    }

    private func perform(_ actions: [OrderedPublisher.Action]) {
        for action in actions {
            switch action {
            case .sendBatch(let flight, let attempt, let parts): sendBatch(flight, attempt, parts)
            case .reply(let reply): send(reply)
            }
        }
    }

    /// One message: a JetStream publish (its id deduplicated as usual). Several: an atomic
    /// batch, the messages before the last as core publishes with the batch headers, the
    /// last (the commit) as a JetStream publish whose ack covers the batch.
    private func sendBatch(_ flight: OrderedPublisher.JobID, _ attempt: UInt64, _ parts: [OrderedPublisher.Part]) {
        let messages = parts.compactMap { part in outgoing[part.job].map { ($0.subject, $0.events[part.message]) } }
        guard messages.count == parts.count else { return }
        let inbox = self.inbox
        let batch = "\(batchPrefix)-\(flight)-\(attempt)"
        for (offset, (subject, event)) in messages.enumerated() {
            let headers = messages.count == 1 ? Headers()
                : AtomicPublish.headers(batch: batch, sequence: offset + 1, count: messages.count)
            if offset < messages.count - 1 {
                var all = headers
                all[Headers.messageID] = event.messageID
                do {
                    try connection.publish(subject, event.payload, headers: all)
                } catch {
                    // Without its commit the batch is never stored.
                    perform(publisher.batchResult(flight: flight, attempt: attempt, .failed("\(error)"), now: clock.now))
                    return
                }
            } else {
                // The completion runs on a libnats thread: it only posts.
                jetStream.publishAsync(subject, event.payload, messageID: event.messageID, headers: headers) { result in
                    inbox.post(.batchAnswered(flight: flight, attempt: attempt, result))
                }
            }
        }
    }

    private func send(_ reply: PubReply) {
        switch reply.outcome {
        case .confirmed(let seqs, let compact):
            let frames = compact ? [Array(seqs.map(String.init).joined(separator: " ").utf8)] : seqs.map { Array(String($0).utf8) }
            self.reply(to: reply.peer, correlation: reply.correlation, frames)
        case .failed(let error):
            logger.debug("PUB answered busy", metadata: ["error.type": "\(error.message)"])
            sendError(to: reply.peer, correlation: reply.correlation, error)
        }
        outgoing = outgoing.filter { publisher.messageIDs(of: $0.key) != nil }
    }
}
