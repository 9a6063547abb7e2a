import EventBus
import ZeroMQ

extension BrokerCore {
    /// Sends each attached consumer what its credit allows of the committed log.
    func pumpConsumers() {
        consumersBlocked = false
        for consumer in consumers.values where consumer.peer != nil {
            pump(consumer)
        }
    }

    /// Sends `consumer` the committed events it may have: one `EVT` each, or,
    /// when its peer asked for batched delivery, `EVTS` messages of up to
    /// 1,000 events and about 4 MiB.
    private func pump(_ consumer: ConsumerState) {
        guard let peer = consumer.peer else { return }
        var sent = 0
        defer { metrics.delivered(sent, consumer: consumer.name) }
        let perMessage = consumer.batched ? WireProtocol.maxBatchEvents : 1
        while consumer.inFlight.count < consumer.credit && consumer.nextSeq <= visibleSeq {
            let room = min(perMessage, consumer.credit - consumer.inFlight.count)
            outgoing.removeAll(keepingCapacity: true)
            var candidates = index.candidates(in: consumer.stages, from: consumer.nextSeq)
            // The records ahead, its own among others' (stages interleave in the log).
            if let next = candidates.peek(), next <= visibleSeq {
                cache.prefetch(from: next, count: min(Int(visibleSeq - next) + 1, 4 * room))
            }
            var bytes = 0
            while outgoing.count < room && bytes < WireProtocol.maxBatchBytes && consumer.nextSeq <= visibleSeq {
                guard let seq = candidates.next(), seq <= visibleSeq else {
                    consumer.nextSeq = visibleSeq + 1
                    break
                }
                consumer.nextSeq = seq + 1
                guard let record = record(seq), consumer.matches(record.topic),
                      !record.isOut || record.isStreamable else { continue }
                bytes += record.topic.count + record.event.count
                outgoing.append(record)  // its last use: moved in, not copied
            }
            guard let first = outgoing.first else { return }
            do {
                guard try sendDelivery(outgoing, batched: consumer.batched, to: peer, name: consumer.nameBytes) else {
                    consumer.nextSeq = first.seq  // the peer's queue is full: try again later
                    consumersBlocked = true
                    return
                }
            } catch {
                peerGone(peer)
                return
            }
            for index in outgoing.indices { consumer.inFlight.append(outgoing[index].seq) }
            sent += outgoing.count
        }
    }

    /// Sends `records` as one `EVTS` message (NAME, then one BATCH frame written in
    /// libzmq's buffer, ``DeliveryBatch``), or as one `EVT` (a single record, not
    /// batched), frame by frame from the records' own bytes.
    ///
    /// - Returns: `false` when the peer's queue is full (nothing was sent).
    private func sendDelivery(_ records: [RoutedRecord], batched: Bool, to peer: [UInt8], name: [UInt8]) throws(ZMQError) -> Bool {
        guard try output.sendFrame(peer, more: true) else { return false }
        try output.sendFrame(WireProtocol.signature, more: true)
        try output.sendFrame(batched ? Verb.evts.bytes : Verb.evt.bytes, more: true)
        try output.sendFrame(name, more: true)
        guard batched else {
            let record = records[0]
            try sendDecimal(record.seq, more: true)
            try output.sendFrame(record.topic, more: true)
            try output.sendFrame(record.event, more: false)
            return true
        }
        // The records are read where they lie, through pointers: a `for record in records`
        // copies each (a retain and a release of its topic and its event).
        return try records.withUnsafeBufferPointer { (records) throws(ZMQError) -> Bool in
            // Not empty: the caller sends at least one record.
            let first = records.baseAddress!
            var size = 0
            for index in records.indices {
                let record = first + index
                size += DeliveryBatch.encodedSize(
                    seq: record.pointee.seq, topicCount: record.pointee.topic.count, eventCount: record.pointee.event.count)
            }
            try output.sendFrame(size: size, more: false) { buffer in
                guard let base = buffer.baseAddress else { return }
                var offset = 0
                for index in records.indices {
                    let record = first + index
                    offset += record.pointee.topic.withUnsafeBytes { topic in
                        record.pointee.event.withUnsafeBytes { event in
                            DeliveryBatch.write(seq: record.pointee.seq, topic: topic, event: event, to: base + offset)
                        }
                    }
                }
            }
            return true
        }
    }

    /// Sends a PUB's OK: one ASCII decimal SEQ frame per event, or for a peer that asked
    /// for `compact_ok` one frame of them all; written without building strings.
    func sendConfirm(_ confirm: PendingConfirm) {
        do {
            guard try output.sendFrame(confirm.peer, more: true) else {
                statistics.droppedReplies += 1
                return
            }
            try output.sendFrame(WireProtocol.signature, more: true)
            try output.sendFrame(Verb.ok.bytes, more: true)
            try output.sendFrame(confirm.correlation, more: !confirm.seqs.isEmpty)
            guard confirm.compact else {
                for (index, seq) in confirm.seqs.enumerated() {
                    try sendDecimal(seq, more: index < confirm.seqs.count - 1)
                }
                return
            }
            // One frame: the SEQs in decimal, separated by single spaces.
            let size = confirm.seqs.reduce(confirm.seqs.count - 1) { $0 + ASCIIDecimal.digits($1) }
            try output.sendFrame(size: size, more: false) { buffer in
                guard let base = buffer.baseAddress else { return }
                var offset = 0
                for (index, seq) in confirm.seqs.enumerated() {
                    if index > 0 {
                        base.storeBytes(of: UInt8(ascii: " "), toByteOffset: offset, as: UInt8.self)
                        offset += 1
                    }
                    offset += ASCIIDecimal.write(seq, to: base + offset)
                }
            }
        } catch {
            sendFailed(to: confirm.peer, error)
        }
    }

    /// Sends `value` in ASCII decimal as one frame.
    private func sendDecimal(_ value: UInt64, more: Bool) throws(ZMQError) {
        // Safe: an allocated buffer always has a base address.
        let count = ASCIIDecimal.write(value, to: decimalScratch.baseAddress!)
        try output.sendFrame(UnsafeRawBufferPointer(rebasing: decimalScratch[..<count]), more: more)
    }

    /// The topic prefix of stage `out`, compared as bytes on the delivery path.
    static let outPrefix = Array("\(Stage.out)/".utf8)

    /// A committed record, from the cache or the log.
    func record(_ seq: UInt64) -> RoutedRecord? {
        if let cached = cache.record(seq) { return cached }
        do {
            guard let stored = try log.read(seq: seq) else { return nil }
            return RoutedRecord(seq: stored.seq, topic: stored.topic, event: stored.event)
        } catch {
            logger.error("log read failed", metadata: ["bus.seq": "\(seq)", "error.type": "\(error)"])
            return nil
        }
    }
}
