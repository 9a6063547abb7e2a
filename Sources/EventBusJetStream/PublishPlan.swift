import EventBus

/// A PUB (or PUBS, unbatched) checked as the broker checks it, and turned into the
/// JetStream messages to publish: one per event, in order.
///
/// The checks, their order and their errors are those of docs/protocol.md ("PUB"): the
/// frames, the stage, the batch limits, then each event with ``EventValidator`` at its
/// stage. An event published to `in` without `time` is stamped with the gateway's time,
/// one time for the whole batch, as the broker does.
public struct PublishPlan: Sendable, Equatable {
    /// One event on its way to JetStream.
    public struct Event: Sendable, Equatable {
        /// The bytes stored: the event as published, `time` stamped at `in`.
        public var payload: [UInt8]
        /// Its dedup identity, sent as `Nats-Msg-Id`.
        public var messageID: String
        /// Whether it is a `reply` or a `query` naming `replyto`: an answer the gateway passes
        /// to the gateway that asked once it is stored at `out`.
        public var isAnswer = false
    }

    public var stream: StageStream
    /// The messages to publish: each identity of the batch once, in order of first appearance.
    public var events: [Event]
    /// For each event of the PUB, the message in ``events`` whose sequence answers it: a
    /// repeat within the batch is published once and gets the first one's SEQ, as the
    /// broker answers it (JetStream would refuse a second copy still in process).
    public var answers: [Int]

    /// The broker's refusal of an event forwarded by reference, which this backend
    /// cannot resolve yet (no SEQ space shared by the stages).
    static func referenceRefused(_ position: Int) -> BusError {
        BusError(.badEvent, "event \(position): forwarding by reference (@SEQ) is not available on the JetStream backend yet; send the event's bytes")
    }

    /// Checks `message` (a PUB: STAGE then EVENT frames) and plans its publishes.
    ///
    /// - Parameters:
    ///   - stages: The configured stages, in order (for `unknown_stage` and its message).
    ///   - maxEventBytes: The largest event other than a `reply`.
    ///   - now: The time to stamp on events of `in` that have none, asked once at most.
    /// - Throws: The first failure, as the broker words it.
    package static func make(_ message: CommandMessage, stages: [String], maxEventBytes: Int,
                            now: () -> String) throws(BusError) -> PublishPlan {
        let stageFrame = try message.argument(0, "STAGE")
        let stage = String(decoding: stageFrame, as: UTF8.self)
        let frames = message.arguments.dropFirst()
        guard !frames.isEmpty else {
            throw BusError(.badFrame, "PUB: no EVENT frame after STAGE (frame 4 is missing)")
        }
        guard stages.contains(stage) else {
            throw BusError(.unknownStage, "frame 3: stage \"\(stage.prefix(64))\" is not configured (stages: \(stages.joined(separator: ", ")))")
        }
        guard frames.count <= WireProtocol.maxBatchEvents else {
            throw BusError(.tooLarge, "PUB: \(frames.count) events, at most \(WireProtocol.maxBatchEvents) in one batch")
        }
        let batchBytes = frames.reduce(0) { $0 + $1.count }
        guard batchBytes <= WireProtocol.maxBatchBytes else {
            throw BusError(.tooLarge, "PUB: \(batchBytes) bytes of events, at most \(WireProtocol.maxBatchBytes) in one batch")
        }
        var time: String?
        var events: [Event] = []
        events.reserveCapacity(frames.count)
        var answers: [Int] = []
        answers.reserveCapacity(frames.count)
        var positions: [String: Int] = [:]
        for (position, frame) in frames.enumerated() {
            guard frame.count <= WireProtocol.maxBatchBytes else {
                throw BusError(.tooLarge, "event \(position): \(frame.count) bytes, at most \(WireProtocol.maxBatchBytes) in one batch")
            }
            if frame.first == UInt8(ascii: "@") { throw referenceRefused(position) }
            let envelope: EnvelopeFields
            do {
                envelope = stage == Stage.in ? try EventValidator.checkIngress(frame) : try EventValidator.scanEnvelope(frame)
            } catch {
                throw BusError(error.code, "event \(position): \(error.message)")
            }
            guard frame.count <= maxEventBytes || envelope.type == EventType.reply.rawValue else {
                throw BusError(.tooLarge, "event \(position): \(frame.count) bytes, max_event_bytes is \(maxEventBytes) (only a reply may be larger, up to \(WireProtocol.maxBatchBytes))")
            }
            var payload = frame
            if stage == Stage.in && envelope.time == nil {
                let stamp = time ?? now()
                time = stamp
                payload = TimeStamp.stamping(frame, time: stamp)
            }
            let messageID = MessageID.make(stage: stage, source: envelope.source, id: envelope.id)
            if let earlier = positions[messageID] {
                answers.append(earlier)
            } else {
                positions[messageID] = events.count
                answers.append(events.count)
                let isAnswer = envelope.replyto != nil
                    && (envelope.type == EventType.reply.rawValue || envelope.type == EventType.query.rawValue)
                events.append(Event(payload: payload, messageID: messageID, isAnswer: isAnswer))
            }
        }
        return PublishPlan(stream: StageStream(stage: stage), events: events, answers: answers)
    }
}
