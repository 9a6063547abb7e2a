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
                                       compact: compactPeers.contains(message.peer),
                                       deadline: clock.now + config.requestTimeout)
        let inbox = self.inbox
        for (ticket, event) in zip(tickets, plan.events) {
            // The completion runs on a libnats thread: it only posts.
            jetStream.publishAsync(plan.stream.subject, event.payload, messageID: event.messageID) { result in
                inbox.post(.published(ticket, result.map(\.sequence)))
            }
        }
    }

    /// One event's ack or failure; sends the answers it releases.
    func published(_ ticket: ConfirmQueue.Ticket, _ result: Result<UInt64, NATSError>) {
        let replies = confirms.complete(ticket, result.mapError { error in
            logger.warning("JetStream publish failed", metadata: ["error.type": "\(error)"])
            return BusError(.busy, "event \(ticket.index): JetStream did not store it (\(error)); "
                + "retry the batch with the same events (what was stored is not stored twice)")
        })
        send(replies)
    }

    /// Answers `busy` for the PUBs whose acks did not all come within the request timeout.
    func expire() {
        let timeout = config.requestTimeout
        let replies = confirms.expire(now: clock.now) { position in
            BusError(.busy, "event \(position): JetStream gave no ack within \(timeout) (no quorum, or no server reachable); "
                + "retry the batch with the same events (what was stored is not stored twice)")
        }
        if !replies.isEmpty { logger.warning("PUBs answered busy: no ack in time", metadata: ["bus.count": "\(replies.count)"]) }
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
