import EventBus
import NATS

extension GatewayCore {
    /// CONSUME: takes the name over from another peer (END to it) or restarts it for this
    /// one, then sets up the durable consumer on a worker; the OK goes when it is ready. A
    /// CONSUME of the name still being set up is answered `busy` at once: it never attached.
    func handleConsume(_ message: CommandMessage, client: String? = nil) throws(BusError) {
        let request = try ConsumeRequest.parse(message, stages: config.stages)
        if let previous = consumers[request.name] {
            if !previous.confirmed {
                // Its set-up was still under way: that CONSUME gets its answer now, not an OK.
                sendError(to: previous.peer, correlation: previous.correlation,
                          BusError(.busy, "consumer \(request.name) was taken over by another CONSUME before it was set up"))
            } else if previous.peer != message.peer {
                send(to: previous.peer, [WireProtocol.signature, Verb.end.bytes, Array(request.name.utf8),
                                         Array("taken over by another CONSUME".utf8)])
            }
            detach(request.name)
        }
        let token = nextToken
        nextToken += 1
        let setup = FetchWorker.Setup(stream: StageStream(stage: request.stage), durable: DurableName.make(request.name),
                                      start: request.start, ackWait: config.ackWait, budget: config.requestTimeout)
        let worker = FetchWorker(token: token, credit: request.credit, setup: setup, jetStream: jetStream, inbox: inbox,
                                 after: lastWorker(of: request.name))
        workers[request.name] = worker
        consumers[request.name] = Attachment(request: request, peer: message.peer, correlation: message.correlation, worker: worker,
                                             batched: batchPeers.contains(message.peer), client: client)
    }

    /// ACK NAME SEQ: acks in JetStream every EVT in flight up to SEQ; no reply unless it fails.
    func handleAck(_ message: CommandMessage) throws(BusError) {
        _ = try message.argument(0, "NAME")
        let seqFrame = try message.argument(1, "SEQ")
        let attachment = try own(message)
        guard let seq = UInt64(String(decoding: seqFrame, as: UTF8.self)), seq >= 1 else {
            throw BusError(.badArgs, "frame 4: SEQ must be a decimal from 1 to the stream's last sequence")
        }
        let acked = attachment.window.acknowledge(upTo: seq)
        for message in acked {
            do { try message.ack() } catch {
                logger.warning("JetStream ack failed; the event comes again", metadata: ["error.type": "\(error)"])
            }
        }
        attachment.worker.release(acked.count)
        // Beyond every SEQ sent (docs/protocol.md "ACK"): delivery skips ahead. The durable is
        // made again after SEQ, at most at the stream's head + 1 (the gateway cannot refuse an
        // ACK above the head as the broker does without asking JetStream; skipping to the head
        // loses no event published later), so its ack floor, and a later `resume`, follow.
        if attachment.confirmed && attachment.window.skipsAhead(seq) {
            restart(attachment, at: seq + 1, skipping: true)
        }
    }

    /// JetStream delivers again what a consumer left unacked for its ack wait (`--ack-wait`,
    /// 5 s). That is how the events a dead gateway had sent come back to the consumer's next
    /// attachment, so the wait is short; the EVTs a live gateway's clients hold are marked
    /// in progress every third of it, so that JetStream waits on for them however long the
    /// client takes. Only those held since before the last mark are (``DeliveryWindow/staleHandles()``):
    /// a plugin that acks as it goes holds thousands of EVTs at any moment, each for
    /// milliseconds, and marking them all was thousands of messages to the cluster a round.
    func keepHeldAlive() {
        guard lastKeepAlive.duration(to: clock.now) >= config.ackWait / 3 else { return }
        lastKeepAlive = clock.now
        for attachment in consumers.values where attachment.confirmed {
            for message in attachment.window.staleHandles() {
                do { try message.inProgress() } catch {
                    logger.warning("JetStream in-progress failed; the event may come again", metadata: ["error.type": "\(error)"])
                    break
                }
            }
        }
    }

    /// CANCEL NAME: stops delivery; what was in flight comes again at the next CONSUME.
    func handleCancel(_ message: CommandMessage) throws(BusError) {
        _ = try message.argument(0, "NAME")
        let attachment = try own(message)
        detach(attachment.request.name)
        reply(to: message.peer, correlation: message.correlation, [])
    }

    private func own(_ message: CommandMessage) throws(BusError) -> Attachment {
        let name = String(decoding: message.arguments[message.arguments.startIndex], as: UTF8.self)
        guard let attachment = consumers[name], attachment.peer == message.peer, attachment.confirmed else {
            throw BusError(.badArgs, "frame 3: no consumer \"\(name.prefix(64))\" on this connection")
        }
        return attachment
    }

    /// Stops the consumer's worker and gives its unacked events back to JetStream (nak),
    /// so that the next CONSUME gets them at once rather than after the ack wait.
    func detach(_ name: String) {
        guard let attachment = consumers.removeValue(forKey: name) else { return }
        attachment.worker.stop()
        for message in attachment.window.drain() { try? message.nak() }
        logger.info("consumer detached", metadata: ["bus.consumer": "\(name)"])
    }

    private func attachment(token: UInt64) -> Attachment? {
        consumers.values.first { $0.worker.token == token }
    }

    func attached(token: UInt64, first: UInt64, made: Bool) {
        guard let attachment = attachment(token: token) else { return }
        attachment.window.started(first: first, made: made)
        if attachment.confirmed {
            // Made again after a gap: its client has had its OK.
            logger.info("consumer made again", metadata: [
                "bus.consumer": "\(attachment.request.name)", "bus.seq": "\(first)", "bus.next_seq": "\(attachment.window.next)",
            ])
            return
        }
        attachment.confirmed = true
        logger.info("consumer attached", metadata: [
            "bus.consumer": "\(attachment.request.name)", "bus.stage": "\(attachment.request.stage)", "bus.seq": "\(first)",
        ])
        reply(to: attachment.peer, correlation: attachment.correlation, [Array(String(first).utf8)])
    }

    func attachFailed(token: UInt64, _ error: NATSError) {
        guard let attachment = attachment(token: token) else { return }
        consumers[attachment.request.name] = nil
        logger.warning("consumer could not be set up", metadata: ["bus.consumer": "\(attachment.request.name)", "error.type": "\(error)"])
        sendError(to: attachment.peer, correlation: attachment.correlation,
                  BusError(.busy, "JetStream could not set up consumer \(attachment.request.name) (\(error)); retry later"))
    }

    /// Messages fetched for a consumer, placed by its ``DeliveryWindow``: the SEQ due next
    /// goes out (an EVT, or into the fetch's EVTS for a consumer attached with batched
    /// delivery: ``DeliveryBuffer``) when the consumer's prefixes take it and is acked at once
    /// when not; a redelivery is not sent twice; after a gap (deliveries lost on their way)
    /// what was placed is sent, the consumer is made again (``restart(_:at:)``) and the rest
    /// of the fetch dropped. Messages for a consumer that detached meanwhile go back (nak).
    func fetched(token: UInt64, _ messages: [JetStreamMessage]) {
        guard let attachment = attachment(token: token), attachment.confirmed else {
            for message in messages { try? message.nak() }
            return
        }
        var deliveries = DeliveryBuffer(name: Array(attachment.request.name.utf8), batched: attachment.batched)
        /// Sends one message of `deliveries`; when the peer is gone, everything it held and
        /// the rest of this fetch (after `position`) go back.
        func deliver(_ frames: [[UInt8]]?, after position: Int) -> Bool {
            guard let frames else { return true }
            if send(to: attachment.peer, frames) { return true }
            for rest in messages.dropFirst(position + 1) { try? rest.nak() }
            detach(attachment.request.name)
            return false
        }
        var skipped = 0
        for (position, message) in messages.enumerated() {
            let metadata: JetStreamMetadata
            do {
                metadata = try message.metadata()
            } catch {
                logger.error("no stream sequence; skipped", metadata: ["nats.subject": "\(message.subject)", "error.type": "\(error)"])
                try? message.ack()
                skipped += 1
                continue
            }
            var topic: [UInt8]?
            do {
                let envelope = try EventValidator.scanEnvelope(message.payload)
                let candidate = Topic.make(stage: attachment.request.stage, subject: envelope.subject, type: envelope.type)
                if attachment.request.delivers(topic: candidate, type: envelope.type) { topic = candidate }
            } catch {
                // Only events the gateway checked are in the stream; something else wrote this.
                logger.error("not an event; skipped", metadata: ["nats.subject": "\(message.subject)", "error.type": "\(error)"])
            }
            let seq = metadata.streamSequence
            switch attachment.window.arrive(seq, delivery: metadata.consumerSequence, redelivered: metadata.deliveries > 1,
                                            forClient: topic != nil, message) {
            case .send:
                guard deliver(deliveries.add(seq: seq, topic: topic ?? [], event: message.payload), after: position) else { return }
            case .pass, .repeated:
                try? message.ack()
                skipped += 1
            case .held:
                skipped += 1  // a redelivery of an EVT the client holds: not sent twice
            case .gap(let restartAt):
                logger.warning("deliveries lost on their way; consumer made again to deliver them in order", metadata: [
                    "bus.consumer": "\(attachment.request.name)", "bus.seq": "\(seq)", "bus.next_seq": "\(attachment.window.next)",
                    "bus.restart_seq": "\(restartAt)", "nats.consumer_seq": "\(metadata.consumerSequence)",
                    "nats.deliveries": "\(metadata.deliveries)",
                ])
                // What the window counts as sent must reach the client before the new consumer
                // delivers after it.
                guard deliver(deliveries.flush(), after: position) else { return }
                restart(attachment, at: restartAt)
                return
            }
        }
        guard deliver(deliveries.flush(), after: messages.count) else { return }
        attachment.worker.release(skipped)
    }

    /// Makes the consumer again at `seq` (the first SEQ its client has not acked) on a new
    /// worker, with the credit its client has not used: JetStream then delivers what was
    /// lost at once and in order, rather than after the ack wait. What the old worker still
    /// fetches is not sent (its token is no longer the attachment's; it goes back as a
    /// detached consumer's does); what the client holds is delivered again and only takes
    /// the new consumer's handles, for its ACK.
    ///
    /// With `skipping`, for an ACK beyond every SEQ sent: the new consumer starts at `seq`
    /// or at the stream's head + 1, whichever is lower.
    func restart(_ attachment: Attachment, at seq: UInt64, skipping: Bool = false) {
        attachment.worker.stop()
        let token = nextToken
        nextToken += 1
        let setup = FetchWorker.Setup(stream: StageStream(stage: attachment.request.stage),
                                      durable: DurableName.make(attachment.request.name), start: .sequence(seq),
                                      ackWait: config.ackWait, retriesSetUp: true, atMostHeadPlusOne: skipping,
                                      budget: config.requestTimeout)
        attachment.worker = FetchWorker(token: token, credit: attachment.request.credit - attachment.window.count,
                                        setup: setup, jetStream: jetStream, inbox: inbox, after: lastWorker(of: attachment.request.name))
        workers[attachment.request.name] = attachment.worker
    }

    /// The last worker made for NAME if its thread still runs: the next one waits for it
    /// (``FetchWorker``: one attach at a time per durable). Forgets the ended ones.
    private func lastWorker(of name: String) -> FetchWorker? {
        workers = workers.filter { !$0.value.hasEnded }
        return workers[name]
    }
}
