import EventBus

/// The figures of one `STATS` answer the campaign acts on.
struct BusStats {
    struct Consumer {
        let acked: Int
        let lag: Int
        let connected: Bool
    }

    let headSeq: Int
    let durableSeq: Int
    let consumers: [String: Consumer]

    /// Asks `client`; nil if the broker did not answer (down, stopped) or the answer is unreadable.
    static func read(_ client: BusClient) async -> BusStats? {
        guard let bytes = try? await client.stats(), let json = try? JSONParser.parse(bytes),
              let head = json["head_seq"]?.int64Value, let durable = json["durable_seq"]?.int64Value else { return nil }
        var consumers: [String: Consumer] = [:]
        if case .array(let entries)? = json["consumers"] {
            for entry in entries {
                guard let name = entry["name"]?.stringValue else { continue }
                consumers[name] = Consumer(acked: Int(entry["acked"]?.int64Value ?? 0), lag: Int(entry["lag"]?.int64Value ?? 0),
                                           connected: entry["connected"]?.boolValue ?? false)
            }
        }
        return BusStats(headSeq: Int(head), durableSeq: Int(durable), consumers: consumers)
    }
}
