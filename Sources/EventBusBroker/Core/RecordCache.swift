import CPrefetch
import DequeModule
import EventBus

/// One logged event as the broker routes it.
struct RoutedRecord: Sendable {
    let seq: UInt64
    let topic: [UInt8]
    let event: [UInt8]
    /// Where the event's `source` and `id` sit in ``event`` when known (empty
    /// when not: a record read back from the log), so that forwarding it by
    /// reference needs no scan.
    var sourceSpan: Range<Int32> = 0..<0
    var idSpan: Range<Int32> = 0..<0

    init(seq: UInt64, topic: [UInt8], event: [UInt8]) {
        self.seq = seq
        self.topic = topic
        self.event = event
    }

    /// A record appended from `pending`; the spans are kept when its `source`
    /// and `id` are bytes of its event.
    init(seq: UInt64, pending: PendingRecord) {
        self.init(seq: seq, topic: pending.topic, event: pending.event)
        if let spans = pending.spansInEvent, !spans.source.isEmpty {
            sourceSpan = spans.source
            idSpan = spans.id
        }
    }

    /// The stage: the topic up to its first `/`.
    var stage: String { Self.stage(of: topic) }

    /// The stage of `topic`: what comes before its first `/`.
    static func stage(of topic: [UInt8]) -> String {
        String(decoding: topic.prefix { $0 != UInt8(ascii: "/") }, as: UTF8.self)
    }

    /// The event type: the topic after its last `/`.
    var type: String { withTypeBytes { String(decoding: $0, as: UTF8.self) } }

    /// Lends `body` the event type's bytes where they lie in the topic: no string, and no slice
    /// that would retain and release the topic (the delivery path asks per record).
    func withTypeBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        topic.withUnsafeBufferPointer { topic in
            let start = topic.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? topic.count
            return body(UnsafeBufferPointer(rebasing: topic[start...]))
        }
    }

    /// Whether the event may leave the broker: ``BrokerCore/isStreamable(type:)`` of its type.
    var isStreamable: Bool { withTypeBytes(BrokerCore.isStreamable(type:)) }

    /// Whether the event is of stage `out` (its topic begins `out/`).
    var isOut: Bool { topic.withUnsafeBufferPointer { ByteRun.starts($0, with: BrokerCore.outPrefix) } }

    /// Whether the event's type is `type`.
    func hasType(_ type: [UInt8]) -> Bool { withTypeBytes { ByteRun.equal($0, type) } }
}

/// The newest logged events, kept in memory so that consumers at the head are
/// served without reading the log back.
struct RecordCache {
    let capacityBytes: Int
    private var records: Deque<RoutedRecord> = []
    private var bytes = 0

    /// How many evictions ahead a record to be evicted is prefetched.
    private static let evictionLead = 8

    /// Room for as many records as `capacityBytes` holds at about 450 bytes an event (a
    /// receipt event with its topic and the 64 counted per record: 512), made at once:
    /// grown by doubling instead, a fresh broker copied its whole list at every doubling
    /// into pages never touched before (2.5 % of its loop in `perf` over 200,000 acks). A
    /// workload of smaller events still grows it, by doubling, past this.
    init(capacityBytes: Int) {
        self.capacityBytes = capacityBytes
        records.reserveCapacity(capacityBytes / 512)
    }

    /// Adds the next record; SEQs must be contiguous.
    mutating func append(_ record: RoutedRecord) {
        if let last = records.last, last.seq + 1 != record.seq { removeAll() }
        records.append(record)
        bytes += record.topic.count + record.event.count + 64
        if bytes > capacityBytes && records.count > Self.evictionLead {
            // The oldest records, about to be released and freed, have long left the
            // CPU's cache: load those a few evictions ahead now.
            eventbus_prefetch(Self.storage(of: records[Self.evictionLead].event))
            eventbus_prefetch(Self.storage(of: records[Self.evictionLead].topic))
        }
        while bytes > capacityBytes, let first = records.first, records.count > 1 {
            records.removeFirst()
            bytes -= first.topic.count + first.event.count + 64
        }
    }

    /// The record with `seq`, if still cached.
    func record(_ seq: UInt64) -> RoutedRecord? {
        guard let first = records.first, seq >= first.seq else { return nil }
        let offset = Int(seq - first.seq)
        return offset < records.count ? records[offset] : nil
    }

    /// Starts loading the events of up to `count` cached records from `seq` into the
    /// CPU's cache, all at once, so that the loop that then takes them one by one
    /// does not wait for memory on each: a record a consumer or a forward reaches
    /// some time after its append has usually left the cache.
    func prefetch(from seq: UInt64, count: Int) {
        guard let first = records.first, seq >= first.seq else { return }
        let start = Int(seq - first.seq)
        guard start < records.count else { return }
        for offset in start..<min(records.count, start + count) {
            eventbus_prefetch(Self.storage(of: records[offset].event))
        }
    }

    /// The address of an array's storage object (its header, then its bytes), taken
    /// without touching it: reading the array (even its count) or retaining it would
    /// wait for the very memory the prefetch is for. An array is one reference to
    /// its storage (no bridging on this platform); a prefetch never faults, whatever
    /// the address.
    @inline(__always)
    private static func storage(of array: borrowing [UInt8]) -> UnsafeRawPointer {
        unsafeBitCast(copy array, to: UnsafeRawPointer.self)
    }

    mutating func removeAll() {
        records.removeAll()
        bytes = 0
    }
}
