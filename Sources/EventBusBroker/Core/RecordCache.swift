import DequeModule

/// One logged event as the broker routes it.
struct RoutedRecord: Sendable {
    let seq: UInt64
    let topic: [UInt8]
    let event: [UInt8]

    /// The stage: the topic up to its first `/`.
    var stage: String { Self.stage(of: topic) }

    /// The stage of `topic`: what comes before its first `/`.
    static func stage(of topic: [UInt8]) -> String {
        String(decoding: topic.prefix { $0 != UInt8(ascii: "/") }, as: UTF8.self)
    }

    /// The event type: the topic after its last `/`.
    var type: String {
        guard let slash = topic.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        return String(decoding: topic[(slash + 1)...], as: UTF8.self)
    }
}

/// The newest logged events, kept in memory so that consumers at the head are
/// served without reading the log back.
struct RecordCache {
    let capacityBytes: Int
    private var records: Deque<RoutedRecord> = []
    private var bytes = 0

    init(capacityBytes: Int) { self.capacityBytes = capacityBytes }

    /// Adds the next record; SEQs must be contiguous.
    mutating func append(_ record: RoutedRecord) {
        if let last = records.last, last.seq + 1 != record.seq { removeAll() }
        records.append(record)
        bytes += record.topic.count + record.event.count + 64
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

    mutating func removeAll() {
        records.removeAll()
        bytes = 0
    }
}
