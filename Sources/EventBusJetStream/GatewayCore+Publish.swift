import EventBus
import NATS

extension GatewayCore {
    /// PUB (and PUBS, unbatched): checked as the broker checks it, then one JetStream
    /// publish per event, handed to libnats in order from this thread. The OK goes after
    /// every ack, in the order of this peer's PUBs (``ConfirmQueue``).
    func handlePub(_ message: CommandMessage) throws(BusError) {
        let plan = try PublishPlan.make(message, stages: config.stages, maxEventBytes: config.maxEventBytes) {
            TimeStamp.rfc3339(TimeStamp.wallMilliseconds())
        }
        let tickets = confirms.enqueue(peer: message.peer, correlation: message.correlation, count: plan.events.count,
                                       answers: plan.answers, compact: compactPeers.contains(message.peer),
                                       deadline: clock.now + config.requestTimeout)
        for (ticket, event) in zip(tickets, plan.events) {
            let sent = Outgoing(subject: plan.stream.subject, event: event,
                                position: plan.answers.firstIndex(of: ticket.index) ?? ticket.index)
            outgoing[ticket] = sent
            publish(sent, ticket)
        }
    }

    private func publish(_ outgoing: Outgoing, _ ticket: ConfirmQueue.Ticket) {
        let inbox = self.inbox
        // The completion runs on a libnats thread: it only posts.
        jetStream.publishAsync(outgoing.subject, outgoing.event.payload, messageID: outgoing.event.messageID) { result in
            inbox.post(.published(ticket, result.map(\.sequence)))
        }
    }

    /// JetStream's "duplicate message id is in process": another copy of this identity (a
    /// client's resend of a PUB still in flight) is being stored; asked again shortly, it
    /// answers with that copy's sequence.
    static let duplicateInProcess = 10158

    /// One message's ack or failure; sends the answers it releases.
    func published(_ ticket: ConfirmQueue.Ticket, _ result: Result<UInt64, NATSError>) {
        guard let sent = outgoing[ticket] else { return }  // its PUB was answered already
        if case .failure(let error) = result, error.jetStreamCode == Self.duplicateInProcess {
            retries.append((clock.now + .milliseconds(20), ticket))
            return
        }
        outgoing[ticket] = nil
        let replies = confirms.complete(ticket, result.mapError { error in
            logger.warning("JetStream publish failed", metadata: ["error.type": "\(error)"])
            return BusError(.busy, "event \(sent.position): JetStream did not store it (\(error)); "
                + "retry the batch with the same events (what was stored is not stored twice)")
        })
        send(replies)
    }

    /// Publishes again the messages whose retry is due (and whose PUB is still waiting).
    func retryDue() {
        let now = clock.now
        let due = retries.filter { $0.due <= now }
        guard !due.isEmpty else { return }
        retries.removeAll { $0.due <= now }
        for (_, ticket) in due {
            if let sent = outgoing[ticket] { publish(sent, ticket) }
        }
    }

    /// Answers `busy` for the PUBs whose acks did not all come within the request timeout.
    func expire() {
        let timeout = config.requestTimeout
        let replies = confirms.expire(now: clock.now) { position in
            BusError(.busy, "event \(position): JetStream gave no ack within \(timeout) (no quorum, or no server reachable); "
                + "retry the batch with the same events (what was stored is not stored twice)")
        }
        if !replies.isEmpty {
            logger.warning("PUBs answered busy: no ack in time", metadata: ["bus.count": "\(replies.count)"])
            let waiting = Set(confirms.waitingBatches)
            outgoing = outgoing.filter { waiting.contains($0.key.batch) }
        }
        send(replies)
    }

    private func send(_ replies: [ConfirmQueue.Reply]) {
        for reply in replies {
            switch reply.outcome {
            case .confirmed(let seqs, let compact):
                let frames = compact ? [Array(seqs.map(String.init).joined(separator: " ").utf8)] : seqs.map { Array(String($0).utf8) }
                self.reply(to: reply.peer, correlation: reply.correlation, frames)
            case .failed(let error):
                sendError(to: reply.peer, correlation: reply.correlation, error)
            }
        }
    }
}
