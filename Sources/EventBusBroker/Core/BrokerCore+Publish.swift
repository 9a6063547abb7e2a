import EventBus

extension BrokerCore {
    /// What a PUB answers for one of its events.
    private enum Answer {
        /// Appended now, as the n-th record of this batch.
        case appended(Int)
        /// Already in the log.
        case logged(UInt64)
    }

    /// A PUB's events on their way to the log, in the order ``handlePub(_:)`` fills them in.
    private struct PubBatch {
        /// The records to append: every event's at first, the new ones' after ``dropRepeats(_:)``.
        var records: [PendingRecord] = []
        /// Each event's identity, in event order.
        var identities: [DedupKey] = []
        /// The identities new to the log, in append order (held in `batchKeys` meanwhile).
        var keys: [DedupKey] = []
        /// Each event's answer, in event order.
        var answers: [Answer] = []
        /// The positions of the events already logged or repeated within the batch.
        var repeats: [Int] = []
        /// How many of the records forward an event by reference.
        var forwardedCount = 0

        init(capacity: Int) {
            records.reserveCapacity(capacity)
            identities.reserveCapacity(capacity)
            answers.reserveCapacity(capacity)
        }
    }

    /// `PUB STAGE EVENT…`: validate all, append all or none, answer after the commit.
    ///
    /// An EVENT frame `@SEQ` forwards the event logged at SEQ by reference
    /// (docs/protocol.md, "Forwarding by reference").
    ///
    /// An event is at most `max_event_bytes`, except a `reply`, which may be as
    /// large as the batch limit (4 MiB): a query answer carries its redacted
    /// views, up to four copies of a page.
    func handlePub(_ message: CommandMessage) throws(BusError) {
        let (stage, events, batchBytes) = try checkedBatch(message)
        // Every event becomes a record first; the rare repeats are dropped after the
        // lookups. (Records are moved, never copied: a copy retains and releases
        // each of a record's buffers.)
        var batch = PubBatch(capacity: events.count)
        // `batchKeys` holds this batch's new identities (record index + 1) until it returns.
        defer { for key in batch.keys { batchKeys.remove(key) } }
        try collectRecords(events, stage: stage, batchBytes: batchBytes, into: &batch)
        // Ordered publishing: after a PUB of this peer was refused `busy`, its next PUB must
        // be that one again, so that a later one never lands before it.
        let ordered = !orderedPeers.isEmpty && orderedPeers.contains(message.peer)
        if ordered, let refused = refusedFirst[message.peer], refused != batch.identities[0] {
            throw BusError(.busy, "an earlier PUB of this connection was refused and not sent again yet; "
                + "with ordered publishing it goes first; nothing was appended; retry later")
        }
        lookUpIdentities(&batch)
        let hits = batch.repeats.count
        if hits > 0 { dropRepeats(events, from: &batch) }
        let first: UInt64
        do {
            first = try appendNew(&batch)
        } catch {
            if ordered && error.code == .busy { refusedFirst[message.peer] = batch.identities[0] }
            throw error
        }
        if ordered && !refusedFirst.isEmpty { refusedFirst[message.peer] = nil }
        statistics.dedupHits += hits
        metrics.dedup(hits)
        let seqs = batch.answers.map { answer in
            switch answer {
            case .appended(let offset): first + UInt64(offset)
            case .logged(let seq): seq
            }
        }
        unconfirmed.append(PendingConfirm(peer: message.peer, correlation: message.correlation, seqs: seqs,
                                          compact: compactPeers.contains(message.peer)))
    }

    /// A PUB's stage, events and their total size, once its shape and limits are checked.
    private func checkedBatch(
        _ message: CommandMessage
    ) throws(BusError) -> (stage: String, events: ArraySlice<[UInt8]>, batchBytes: Int) {
        let stage = String(decoding: try argument(message, 0, "STAGE"), as: UTF8.self)
        let events = message.arguments.dropFirst()
        guard !events.isEmpty else {
            throw BusError(.badFrame, "PUB: no EVENT frame after STAGE (frame 4 is missing)")
        }
        guard stageNames.contains(stage) else {
            throw BusError(.unknownStage, "frame 3: stage \"\(stage.prefix(64))\" is not configured (stages: \(config.stages.joined(separator: ", ")))")
        }
        guard events.count <= WireProtocol.maxBatchEvents else {
            throw BusError(.tooLarge, "PUB: \(events.count) events, at most \(WireProtocol.maxBatchEvents) in one batch")
        }
        let batchBytes = events.reduce(0) { $0 + $1.count }
        guard batchBytes <= WireProtocol.maxBatchBytes else {
            throw BusError(.tooLarge, "PUB: \(batchBytes) bytes of events, at most \(WireProtocol.maxBatchBytes) in one batch")
        }
        return (stage, events, batchBytes)
    }

    /// Checks every event and makes its record and identity; prefetches the identities'
    /// slots, so that ``lookUpIdentities(_:)`` finds them in the cache.
    @inline(__always)
    private func collectRecords(
        _ events: ArraySlice<[UInt8]>, stage: String, batchBytes: Int, into batch: inout PubBatch
    ) throws(BusError) {
        let stageBytes = Array(stage.utf8)
        var appendTime: String?
        var referencedBytes = 0
        let predecessor = predecessors[stage]
        prefetchReferenced(events)
        for position in 0..<events.count {
            let frame = events[events.startIndex + position]
            let record = try pending(frame, position: position, stage: stage, stageBytes: stageBytes, predecessor: predecessor,
                                     appendTime: &appendTime, referencedBytes: &referencedBytes, batchBytes: batchBytes)
            let key = record.withIdentity { DedupKey(stage: stageBytes, source: $0, id: $1) }
            dedup.prefetch(key)
            if frame.first == Self.referenceMark { batch.forwardedCount += 1 }
            batch.records.append(record)
            batch.identities.append(key)
        }
    }

    /// Answers each event already in the log, or earlier in the batch, with its SEQ or
    /// record; gives each new one the next record of the append.
    @inline(__always)
    private func lookUpIdentities(_ batch: inout PubBatch) {
        for index in batch.identities.indices {
            let key = batch.identities[index]
            let kept = index - batch.repeats.count
            if let seq = dedup.seq(for: key) {
                batch.answers.append(.logged(seq))
                batch.repeats.append(index)
            } else if let earlier = batchKeys.seq(for: key) {
                batch.answers.append(.appended(Int(earlier) - 1))
                batch.repeats.append(index)
            } else {
                batchKeys.update(UInt64(kept + 1), for: key)
                batch.answers.append(.appended(kept))
                batch.keys.append(key)
            }
        }
    }

    /// Removes the records of the repeats (the rare case), keeping the others in order.
    private func dropRepeats(_ events: ArraySlice<[UInt8]>, from batch: inout PubBatch) {
        for index in batch.repeats where events[events.startIndex + index].first == Self.referenceMark {
            batch.forwardedCount -= 1
        }
        let records = batch.records, repeats = batch.repeats
        var next = 0
        batch.records = records.indices.compactMap { index in
            if next < repeats.count && repeats[next] == index {
                next += 1
                return nil
            }
            return records[index]
        }
    }

    /// Appends the new records, if any, and enters their identities in the dedup
    /// window; returns the first one's SEQ (0 when there was none).
    @inline(__always)
    private func appendNew(_ batch: inout PubBatch) throws(BusError) -> UInt64 {
        guard !batch.records.isEmpty else { return 0 }
        let now = clock.wallMilliseconds()
        let first = try append(batch.records, timestamp: now).lowerBound
        statistics.forwarded += batch.forwardedCount
        for (offset, key) in batch.keys.enumerated() {
            dedup.insert(key, seq: first + UInt64(offset), timestamp: now)
        }
        return first
    }

    /// The record event `position` of a PUB to `stage` appends, if it is not a repeat: the
    /// event as published (`time` stamped at `in`), or the one a reference names.
    private func pending(_ frame: [UInt8], position: Int, stage: String, stageBytes: [UInt8], predecessor: [UInt8]?,
                         appendTime: inout String?, referencedBytes: inout Int, batchBytes: Int) throws(BusError) -> PendingRecord {
        // No event is parsed beyond the batch limit; the per-type limit needs the type.
        guard frame.count <= WireProtocol.maxBatchBytes else {
            throw BusError(.tooLarge, "event \(position): \(frame.count) bytes, at most \(WireProtocol.maxBatchBytes) in one batch")
        }
        if frame.first == Self.referenceMark {
            let record = try forwarded(frame, to: stage, stageBytes: stageBytes, from: predecessor, position: position)
            // What a batch appends is held to the batch limit, references included.
            referencedBytes += record.event.count
            guard batchBytes + referencedBytes <= WireProtocol.maxBatchBytes else {
                throw BusError(.tooLarge, "event \(position): the events referenced come to over \(WireProtocol.maxBatchBytes) bytes, the limit of one batch")
            }
            return record
        }
        let routing = try Self.routing(frame, stage: stage, stageBytes: stageBytes, position: position, topics: &topics)
        // A `reply` (a paged query answer with its redacted views) may take the
        // whole batch limit; every other event is held to max_event_bytes.
        guard frame.count <= config.maxEventBytes || routing.isReply else {
            throw BusError(.tooLarge, "event \(position): \(frame.count) bytes, max_event_bytes is \(config.maxEventBytes) (only a reply may be larger, up to \(WireProtocol.maxBatchBytes))")
        }
        guard !routing.hasTime && stage == Stage.in else { return routing.record(of: frame) }
        // A missing `*_at` means the envelope's time, or the broker's append
        // time if that is missing too (docs/events.md, "The envelope": A missing
        // time). Stamp it once, here, so that every stage and every replay reads
        // the same time.
        let time = appendTime ?? Clock.rfc3339(clock.wallMilliseconds())
        appendTime = time
        let stored = Self.stamping(frame, time: time)
        // `source` and `id` follow the opening brace, after which the stamp went in.
        return routing.record(of: stored, shiftedBy: stored.count - frame.count)
    }

    /// What the broker needs of an event to log it: its topic, identity, whether it is a `reply`
    /// and whether it has a `time`.
    struct Routing {
        /// Where the identity is: ranges of the frame, or decoded (escapes) into arrays of its own.
        enum Identity {
            case inFrame(source: Range<Int>, id: Range<Int>)
            case decoded(source: [UInt8], id: [UInt8])
        }

        let topic: [UInt8]
        let identity: Identity
        let isReply: Bool
        let hasTime: Bool

        /// The record of `event`: the frame itself or, stamped with a time, the frame with
        /// `shift` bytes inserted before its identity.
        func record(of event: [UInt8], shiftedBy shift: Int = 0) -> PendingRecord {
            switch identity {
            case .inFrame(let source, let id):
                PendingRecord(topic: topic, event: event, source: (source.lowerBound + shift)..<(source.upperBound + shift),
                              id: (id.lowerBound + shift)..<(id.upperBound + shift))
            case .decoded(let source, let id):
                PendingRecord(topic: topic, source: source, id: id, event: event)
            }
        }
    }

    /// Validates an event for `stage` and extracts its ``Routing``.
    ///
    /// Most events pass one scan that makes no string: the attributes are
    /// sliced from the frame. The others (escapes, rare ingress types) and
    /// every refusal take the string path, which decides and words the error
    /// exactly: at `in` the envelope and the type's `data` rules, past `in` the
    /// envelope (neither builds a JSON tree for common events).
    static func routing(
        _ frame: [UInt8], stage: String, stageBytes: [UInt8], position: Int, topics: inout TopicTable
    ) throws(BusError) -> Routing {
        let spans = frame.withUnsafeBytes { EventValidator.envelopeSpans($0, stage: stage) }
        if let spans {
            return Routing(
                topic: topics.topic(stage: stageBytes, subject: frame[spans.subject], type: frame[spans.type]),
                identity: .inFrame(source: spans.source, id: spans.id),
                isReply: frame[spans.type].withUnsafeBufferPointer { ByteRun.equal($0, BrokerCore.replyType) },
                hasTime: spans.hasTime)
        }
        let envelope: EnvelopeFields
        do {
            envelope = stage == Stage.in ? try EventValidator.checkIngress(frame) : try EventValidator.scanEnvelope(frame)
        } catch {
            throw BusError(error.code, "event \(position): \(error.message)")
        }
        return Routing(
            topic: Topic.make(stage: stage, subject: envelope.subject, type: envelope.type),
            identity: .decoded(source: Array(envelope.source.utf8), id: Array(envelope.id.utf8)),
            isReply: envelope.type == EventType.reply.rawValue, hasTime: envelope.time != nil)
    }

    /// Sends an event to the stream's subscribers without ever waiting for one.
    ///
    /// The XPUB is in no-drop mode, so the send fails when a matching
    /// subscriber's queue (`streamHighWaterMark`) is full, where libzmq would
    /// otherwise drop it for that subscriber silently. Then the overflow is
    /// counted and the event goes out once more in drop mode: every subscriber
    /// with room gets it, the full one misses it and libzmq skips it until it
    /// has read its queue down. A slow subscriber thus never holds back the
    /// others nor grows the broker's memory, and STATS shows that it fell behind.
    ///
    /// With no subscription on the stream the event is not sent at all: libzmq would copy
    /// it into a message only to find no subscriber (9 % of the broker's instructions per
    /// ack under the reducer's load). Without keys the XPUB passes up a prefix's first
    /// subscription and its last unsubscription only, so ``BrokerStatistics/streamSubscriptions``
    /// is exactly the number of prefixes someone holds. With keys (a manual XPUB) every
    /// message is passed up, a stray unsubscription included, so the count proves nothing
    /// and every event is sent.
    func publishToStream(_ record: RoutedRecord) {
        guard access != nil || statistics.streamSubscriptions > 0 else { return }
        do {
            if try output.publish(topic: record.topic, seq: record.seq, event: record.event, dropIfFull: false) { return }
            statistics.streamOverflows += 1
            _ = try output.publish(topic: record.topic, seq: record.seq, event: record.event, dropIfFull: true)
        } catch {
            logger.warning("stream send failed", metadata: ["error.type": "\(error)"])
        }
    }

    /// `frame` with `"time":"…",` inserted as its first member (it is a valid JSON object).
    static func stamping(_ frame: [UInt8], time: String) -> [UInt8] { TimeStamp.stamping(frame, time: time) }

    /// Appends records and hands them to the kernel; on failure nothing stays.
    func append(_ records: [PendingRecord], timestamp: UInt64) throws(BusError) -> ClosedRange<UInt64> {
        let range: ClosedRange<UInt64>
        do {
            range = try log.append(records, timestamp: timestamp)
            try log.flush()
        } catch {
            // Whatever of this batch is still buffered must never reach the file.
            log.discardUnwritten()
            logger.error("log append failed", metadata: ["error.type": "\(error)", "bus.head_seq": "\(log.headSeq)"])
            throw BusError(.busy, "the log could not be written (\(error)); nothing was appended; retry later")
        }
        // One append is one stage (a PUB's, or a query's). Its records are cached and
        // indexed now — consumers see nothing above `visibleSeq`, which the commit
        // raises — and those of `out` and `diag` wait for the commit to be routed.
        let stage = RoutedRecord.stage(of: records[0].topic)
        let routed = stage == Stage.out || stage == Stage.diag
        records.withUnsafeBufferPointer { records in
            for offset in records.indices {
                let logged = RoutedRecord(seq: range.lowerBound + UInt64(offset), pending: records[offset])
                cache.append(logged)
                if routed {
                    indexRecord(logged, stage: stage)
                    staged.append(logged)
                }
            }
        }
        if !routed { index.append(stage: stage, seqs: range) }
        stagedRuns.append((stage, records.count))
        return range
    }
}
