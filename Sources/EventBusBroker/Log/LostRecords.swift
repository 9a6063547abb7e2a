import EventBus
import Logging

/// `eventbus recover`: continues a log that lost records its consumers or snapshots had seen
/// (``LogReferences``), without ever giving a SEQ twice.
///
/// Each lost SEQ, from the log's head + 1 up to the highest reference, gets a record on
/// stage `diag` that says it was lost (type `log.records_lost`, subject `log`, the SEQ in
/// `data.seq`). SEQs stay contiguous, the segment format is unchanged, consumers of `in`, the
/// plugin stages and `out` skip the markers as they skip any other stage, and new events
/// continue after the highest SEQ that anything has seen.
public enum LostRecords {
    /// What a recovery did.
    public struct Outcome: Sendable, Equatable {
        /// The SEQs marked as lost; `nil` when nothing had seen past the log's end.
        public let marked: ClosedRange<UInt64>?
        /// The log's head SEQ after it.
        public let headSeq: UInt64
    }

    /// The topic of a marker.
    static let topic = Array("diag/log/log.records_lost".utf8)

    /// Opens the log in `dataDirectory` (repairing a torn tail as the broker does), marks
    /// the SEQs lost past its end, and syncs. Takes the data directory's lock: refused while
    /// a broker serves it.
    ///
    /// - Parameters:
    ///   - dataDirectory: The broker's data directory.
    ///   - logger: Where the log's recovery and the markers are reported.
    ///   - now: Milliseconds since 1970 for the markers' time (the wall clock by default).
    public static func recover(
        dataDirectory: String, logger: Logger, now: UInt64? = nil
    ) throws(LogError) -> Outcome {
        let now = now ?? Clock.wallMilliseconds()
        let lock = try BrokerLock(directory: dataDirectory)
        defer { lock.release() }
        let log = try SegmentLog(directory: dataDirectory, logger: logger)
        defer { log.close() }
        let offsets = try OffsetStore(directory: dataDirectory, logger: logger).load()
        let references = LogReferences(offsets: offsets, dataDirectory: dataDirectory)
        let head = log.headSeq
        guard references.highestSeq > head else { return Outcome(marked: nil, headSeq: head) }
        let lost = (head + 1)...references.highestSeq
        var batch: [PendingRecord] = []
        batch.reserveCapacity(WireProtocol.maxBatchEvents)
        for seq in lost {
            batch.append(marker(seq: seq, time: now))
            if batch.count == WireProtocol.maxBatchEvents || seq == lost.upperBound {
                let appended = try log.append(batch, timestamp: now)
                guard appended.lowerBound == seq + 1 - UInt64(batch.count) else {
                    throw LogError(.corrupt, "recovery appended SEQs \(appended) where \(seq + 1 - UInt64(batch.count))… was expected")
                }
                batch.removeAll(keepingCapacity: true)
            }
        }
        try log.sync()
        logger.warning("marked lost log records", metadata: [
            "log.lost_from": "\(lost.lowerBound)", "log.lost_to": "\(lost.upperBound)",
            "log.reference": "\(references.references.first?.description ?? "-")",
        ])
        return Outcome(marked: lost, headSeq: log.headSeq)
    }

    /// The marker of lost SEQ `seq`.
    static func marker(seq: UInt64, time: UInt64) -> PendingRecord {
        let id = "lost:\(seq)"
        let source = "/eventbus/broker"
        let event = #"{"specversion":"1.0","id":"\#(id)","source":"\#(source)","type":"log.records_lost","subject":"log","time":"\#(Clock.rfc3339(time))","data":{"seq":\#(seq),"reason":"lost from the log before eventbus recover"}}"#
        return PendingRecord(topic: topic, source: source.utf8, id: id.utf8, event: Array(event.utf8))
    }
}
