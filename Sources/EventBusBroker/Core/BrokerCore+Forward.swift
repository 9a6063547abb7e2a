import EventBus

extension BrokerCore {
    /// The first byte of an EVENT frame that forwards by reference: `@SEQ`.
    static let referenceMark = UInt8(ascii: "@")

    /// The stage each stage may forward from by reference: the one its plugin
    /// consumes. The pipeline `[a, b, c]` runs `in` → a → `a` → b → `b` → c →
    /// `out` (the last plugin publishes to `out`; its own stage, which an admin
    /// may still publish to, follows `b` too). `in` and `diag` have none.
    static func predecessors(pipeline: [String]) -> [String: [UInt8]] {
        let chain = [Stage.in] + pipeline.dropLast() + [Stage.out]
        var result: [String: [UInt8]] = [:]
        for (previous, stage) in zip(chain, chain.dropFirst()) {
            result[stage] = Array(previous.utf8) + [UInt8(ascii: "/")]
        }
        if let last = pipeline.last { result[last] = result[Stage.out] }
        return result
    }

    /// The record a `@SEQ` frame of a PUB to `stage` appends: the event logged
    /// at SEQ, unchanged, under `stage`'s topic.
    ///
    /// The event was validated when it was first published, so nothing of it
    /// is scanned again; its `source` and `id` (the dedup identity at `stage`)
    /// come from the cached record's spans, or from the log for an old one.
    /// SEQ must be committed and of the stage right before `stage`: what that
    /// stage's plugin consumed.
    ///
    /// - Parameter from: `predecessors[stage]`, looked up once per PUB.
    func forwarded(_ frame: [UInt8], to stage: String, stageBytes: [UInt8], from: [UInt8]?, position: Int) throws(BusError) -> PendingRecord {
        guard let seq = ASCIIDecimal.parse(frame.dropFirst()), seq > 0 else {
            throw BusError(.badArgs, "event \(position): a reference is @ and a SEQ in decimal, not \"\(String(decoding: frame.prefix(32), as: UTF8.self))\"")
        }
        guard let from else {
            throw BusError(.badEvent, "event \(position): nothing may be forwarded by reference to stage \(stage); "
                + "only to a stage after in (\(predecessors.keys.sorted().joined(separator: ", ")))")
        }
        // One record, changed in place: a `found` copied into a `var` was copied and
        // destroyed three times over per reference (outlined value witnesses).
        guard seq <= visibleSeq, var record = try forwardable(seq) else {
            throw BusError(.badArgs, "event \(position): @\(seq) names no logged event (the log holds \(log.firstSeq) to \(visibleSeq))")
        }
        guard record.topic.withUnsafeBufferPointer({ ByteRun.starts($0, with: from) }) else {
            throw BusError(.badEvent, "event \(position): @\(seq) is an event of stage \(RoutedRecord.stage(of: record.topic)); "
                + "a PUB to \(stage) forwards only events of \(String(decoding: from.dropLast(), as: UTF8.self))")
        }
        record.topic = topics.topic(stage: stageBytes, suffix: record.topic[(from.count - 1)...])
        return record
    }

    /// Starts loading the cached events that a PUB's `@SEQ` frames name, all at once
    /// (see ``RecordCache/prefetch(from:count:)``).
    func prefetchReferenced(_ frames: ArraySlice<[UInt8]>) {
        for frame in frames where frame.first == Self.referenceMark {
            if let seq = ASCIIDecimal.parse(frame.dropFirst()) { cache.prefetch(from: seq, count: 1) }
        }
    }

    /// The record at `seq` with its identity: from the cache when it has the
    /// spans, else read back from the log (`nil` when retention removed it; a
    /// read that fails is `busy`, as a failed write is).
    private func forwardable(_ seq: UInt64) throws(BusError) -> PendingRecord? {
        if let cached = cache.record(seq), !cached.sourceSpan.isEmpty {
            return PendingRecord(topic: cached.topic, event: cached.event, source: Self.range(cached.sourceSpan),
                                 id: Self.range(cached.idSpan))
        }
        do {
            guard let stored = try log.read(seq: seq) else { return nil }
            return PendingRecord(topic: stored.topic, source: stored.source, id: stored.id, event: stored.event)
        } catch {
            logger.error("log read failed", metadata: ["bus.seq": "\(seq)", "error.type": "\(error)"])
            throw BusError(.busy, "the log could not be read at SEQ \(seq) (\(error)); nothing was appended; retry later")
        }
    }

    private static func range(_ span: Range<Int32>) -> Range<Int> { Int(span.lowerBound)..<Int(span.upperBound) }
}
