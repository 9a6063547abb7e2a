import EventBus
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// One client of `GET /v1/stream`, once its consumers run: three tasks (four for a user's
/// stream) joined by a bounded buffer (docs/http.md, "The stream"):
///
/// - the pump reads the consumer of `out`, ACKs as it reads (the broker's credit never waits
///   for a client), and queues the client's events as SSE messages;
/// - for a user's stream, the reader of `in` follows the membership (``MembershipFeed``),
///   which the pump waits for when an event was caused further on in `in`;
/// - the heartbeat queues a comment every ``StreamSettings/heartbeat``;
/// - the writer writes the buffer to the client, which takes as long as the client reads.
///
/// A message that finds the buffer full (``StreamSettings/bufferEvents``) cuts the client:
/// nothing more is queued, what waits is dropped, and after the write in progress the
/// writer sends a last `cut` event whose data names the SEQ of the last event written, the
/// one to resume after. A client that does not take that write within
/// ``StreamSettings/cutGrace`` has its connection closed. No client waits for another, and
/// each holds at most its buffer.
final class StreamSession: Sendable {
    let hub: StreamHub
    /// The consumer of `out`, under the prefix of the scope.
    let consumer: DurableConsumer
    /// For a user's stream, the consumer of `in` and the membership it feeds.
    let membership: (consumer: DurableConsumer, feed: MembershipFeed)?
    let scope: StreamScope
    let after: UInt64
    /// The plugin that reads `in`, whose outputs name their SEQ of `in` (``StreamScope/verdict(topic:event:firstPlugin:)``).
    let firstPlugin: String?
    /// Whether ``run(_:)`` began: if the response never got to its body (the client went
    /// before the head was written), the consumer is let go when the session is.
    private let began = Atomic(false)

    /// One message of the buffer.
    enum Message: Sendable {
        case event(seq: UInt64, bytes: [UInt8])
        case heartbeat
    }

    /// How a task of the stream ended.
    enum Outcome: Sendable {
        /// The writer is done; `clean` when the response can be finished.
        case written(clean: Bool)
        /// The pump or the heartbeat cut the client.
        case cut
        /// The client did not take its last write in time.
        case graceExpired
        case ended
    }

    /// What queuing a message did.
    enum Queued {
        case queued, cutNow, closed
    }

    init(hub: StreamHub, consumer: DurableConsumer, membership: (consumer: DurableConsumer, feed: MembershipFeed)?,
         scope: StreamScope, after: UInt64, firstPlugin: String?) {
        self.hub = hub
        self.consumer = consumer
        self.membership = membership
        self.scope = scope
        self.after = after
        self.firstPlugin = firstPlugin
    }

    deinit {
        guard !began.load(ordering: .sequentiallyConsistent) else { return }
        let (consumer, membership, hub) = (self.consumer, self.membership?.consumer, self.hub)
        Task {
            try? await consumer.cancel()
            try? await membership?.cancel()
            hub.release(consumer.name)
        }
    }

    /// The opening comment, which also sends the headers at once.
    var opening: ServerSentEvent { .comment("eventbus stream after \(after)") }

    /// The last event for a client that fell behind.
    static func cutEvent(lastDelivered: UInt64, buffer: Int) -> ServerSentEvent {
        ServerSentEvent(event: "cut", data: Array(
            #"{"reason":"slow_client","last_event_id":"\#(lastDelivered)","buffer":\#(buffer),"detail":"this client fell \#(buffer) messages behind: reconnect with Last-Event-ID \#(lastDelivered)"}"#.utf8))
    }

    /// Streams until the client goes, is cut, the consumer ends, or the server shuts down.
    ///
    /// - Throws: When the connection must be closed rather than finished (a write failed or
    ///   was given up on).
    func run(_ writer: inout any ResponseBodyWriter) async throws {
        began.store(true, ordering: .sequentiallyConsistent)
        let settings = hub.settings
        hub.counters.opened()
        let state = StreamSessionState(after: after)
        let box = BodyWriterBox(writer)
        let (messages, continuation) = AsyncStream.makeStream(of: Message.self, bufferingPolicy: .bufferingOldest(settings.bufferEvents))
        let clean = await withGracefulShutdownHandler {
            await withTaskGroup(of: Outcome.self, returning: Bool.self) { group in
                var clean = true
                group.addTask { await self.pump(continuation, state) }
                if let membership = self.membership {
                    group.addTask { await self.follow(membership.consumer, into: membership.feed, continuation) }
                }
                group.addTask { await self.beat(continuation, state) }
                group.addTask { await self.write(messages, box, state) }
                while let outcome = await group.next() {
                    switch outcome {
                    case .written(let finished):
                        clean = clean && finished  // a write that beat the grace's cancellation does not undo it
                        group.cancelAll()
                    case .cut:
                        group.addTask {
                            try? await Task.sleep(for: settings.cutGrace)
                            return Task.isCancelled ? .ended : .graceExpired
                        }
                    case .graceExpired:
                        clean = false
                        group.cancelAll()
                    case .ended:
                        break
                    }
                }
                return clean
            }
        } onGracefulShutdown: {
            state.stop()
            continuation.finish()
        }
        try? await consumer.cancel()
        try? await membership?.consumer.cancel()
        hub.release(consumer.name)
        hub.counters.closed(leftBuffered: state.buffered)
        hub.logger.debug("stream closed", metadata: ["stream.consumer": "\(consumer.name)", "stream.last": "\(state.lastDelivered)",
                                                     "stream.cut": "\(state.wasCut)"])
        guard clean else { throw CancellationError() }
        writer = box.writer
        try await writer.finish(nil)
    }

    /// Reads the consumer of `out` into the buffer.
    private func pump(_ continuation: AsyncStream<Message>.Continuation, _ state: StreamSessionState) async -> Outcome {
        defer { continuation.finish() }
        var acks = AckCadence(credit: hub.settings.credit)
        do {
            for try await delivery in consumer {
                if acks.take() { consumer.ack(delivery.seq) }
                guard delivery.seq > after, await shows(delivery) else { continue }
                let type = delivery.topic.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false).last.map(String.init)
                let message = ServerSentEvent(id: String(delivery.seq), event: type, data: delivery.event)
                switch queue(.event(seq: delivery.seq, bytes: message.bytes), continuation, state) {
                case .queued: continue
                case .cutNow: return .cut
                case .closed: return .ended
                }
            }
            if let reason = consumer.endReason {
                hub.logger.warning("stream consumer ended by the broker", metadata: ["stream.consumer": "\(consumer.name)", "reason": "\(reason)"])
            }
        } catch {
            hub.logger.warning("stream consumer failed", metadata: ["stream.consumer": "\(consumer.name)", "error": "\(error)"])
        }
        return .ended
    }

    /// Whether the client sees `delivery`, an event of `out`: for a channel's event, once the
    /// membership has been read as far as the event's cause. `false` also when the reader of
    /// `in` ended first (the stream then ends with it).
    private func shows(_ delivery: Delivery) async -> Bool {
        switch scope.verdict(topic: delivery.topic, event: delivery.event, firstPlugin: firstPlugin) {
        case .hidden: return false
        case .shown: return true
        case .ifMember(let cid, let cause):
            guard let feed = membership?.feed else { return false }
            if let cause, !(await feed.wait(through: cause)) { return false }
            return feed.contains(cid, at: cause)
        }
    }

    /// Reads the consumer of `in` into the membership, ACKing as it reads. When it ends (the
    /// broker ended it, or it failed) the stream ends too: without the membership no channel's
    /// event can be judged.
    private func follow(_ reader: DurableConsumer, into feed: MembershipFeed, _ continuation: AsyncStream<Message>.Continuation) async -> Outcome {
        defer { feed.end() }
        var acks = AckCadence(credit: hub.settings.credit)
        do {
            for try await delivery in reader {
                if acks.take() { reader.ack(delivery.seq) }
                if let type = delivery.topic.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false).dropFirst(2).first {
                    feed.apply(type: String(type), event: delivery.event, seq: delivery.seq)
                }
            }
            guard !Task.isCancelled else { return .ended }
            hub.logger.warning("stream membership consumer ended by the broker",
                               metadata: ["stream.consumer": "\(reader.name)", "reason": "\(reader.endReason ?? "-")"])
        } catch {
            guard !Task.isCancelled else { return .ended }
            hub.logger.warning("stream membership consumer failed", metadata: ["stream.consumer": "\(reader.name)", "error": "\(error)"])
        }
        continuation.finish()
        return .ended
    }

    /// Queues a heartbeat every ``StreamSettings/heartbeat``.
    private func beat(_ continuation: AsyncStream<Message>.Continuation, _ state: StreamSessionState) async -> Outcome {
        while true {
            do { try await Task.sleep(for: hub.settings.heartbeat) } catch { return .ended }
            switch queue(.heartbeat, continuation, state) {
            case .queued: continue
            case .cutNow: return .cut
            case .closed: return .ended
            }
        }
    }

    /// Puts `message` in the buffer, or cuts the client when it is full.
    private func queue(_ message: Message, _ continuation: AsyncStream<Message>.Continuation, _ state: StreamSessionState) -> Queued {
        guard !state.wasCut else { return .closed }
        let count = state.queued()
        switch continuation.yield(message) {
        case .enqueued:
            hub.counters.queued(streamBuffered: count)
            return .queued
        case .dropped:
            state.dequeued()
            guard state.cut() else { return .closed }
            hub.counters.cut()
            hub.logger.notice("stream client cut: its buffer is full", metadata: [
                "stream.consumer": "\(consumer.name)", "stream.buffer": "\(hub.settings.bufferEvents)", "stream.last": "\(state.lastDelivered)"])
            continuation.finish()
            return .cutNow
        case .terminated:
            state.dequeued()
            return .closed
        @unknown default:
            state.dequeued()
            return .closed
        }
    }

    /// Writes the buffer to the client, then the `cut` event if it was cut.
    private func write(_ messages: AsyncStream<Message>, _ box: BodyWriterBox, _ state: StreamSessionState) async -> Outcome {
        do {
            try await box.writer.write(ByteBuffer(bytes: opening.bytes))
            for await message in messages {
                state.dequeued()
                hub.counters.dequeued()
                guard !state.mustStop else { break }
                switch message {
                case .event(let seq, let bytes):
                    try await box.writer.write(ByteBuffer(bytes: bytes))
                    state.delivered(seq)
                    hub.counters.delivered()
                case .heartbeat:
                    try await box.writer.write(ByteBuffer(bytes: ServerSentEvent.comment("heartbeat").bytes))
                }
            }
            if state.wasCut {
                try await box.writer.write(ByteBuffer(bytes: Self.cutEvent(lastDelivered: state.lastDelivered, buffer: hub.settings.bufferEvents).bytes))
            }
            return .written(clean: true)
        } catch {
            hub.logger.debug("stream write failed", metadata: ["stream.consumer": "\(consumer.name)", "error": "\(error)"])
            return .written(clean: false)
        }
    }
}
