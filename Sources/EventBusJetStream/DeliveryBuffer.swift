import EventBus

/// The EVT or EVTS messages of one consumer's deliveries, in SEQ order (docs/protocol.md,
/// "Batched delivery (EVTS)").
///
/// Unbatched, each delivery is its own EVT at once. Batched (the peer sent HELLO with
/// `"batch": true` before its CONSUME), deliveries gather into one EVTS of at most
/// ``WireProtocol/maxBatchEvents`` events and about ``WireProtocol/maxBatchBytes`` bytes; the
/// caller sends what ``add(seq:topic:event:)`` hands back, and what ``flush()`` hands back
/// once it has placed a fetch, so a consumer gets whatever its fetch brought in as few
/// messages as the limits allow.
struct DeliveryBuffer {
    let name: [UInt8]
    let batched: Bool
    private var events: [(seq: UInt64, topic: [UInt8], event: [UInt8])] = []
    private var bytes = 0

    init(name: [UInt8], batched: Bool) {
        self.name = name
        self.batched = batched
    }

    /// Whether no delivery waits.
    var isEmpty: Bool { events.isEmpty }

    /// Adds one delivery. Returns a message to send now: the EVT itself when unbatched; when
    /// batched, the deliveries gathered before this one if this one would take the batch past
    /// its bytes, or the batch with this one if that filled it; else `nil`.
    mutating func add(seq: UInt64, topic: [UInt8], event: [UInt8]) -> [[UInt8]]? {
        guard batched else {
            return [WireProtocol.signature, Verb.evt.bytes, name, Array(String(seq).utf8), topic, event]
        }
        let size = DeliveryBatch.encodedSize(seq: seq, topicCount: topic.count, eventCount: event.count)
        var ready: [[UInt8]]?
        if !events.isEmpty && bytes + size > WireProtocol.maxBatchBytes { ready = flush() }
        events.append((seq, topic, event))
        bytes += size
        if ready == nil && events.count >= WireProtocol.maxBatchEvents { ready = flush() }
        return ready
    }

    /// The EVTS of the deliveries gathered, `nil` when none are.
    mutating func flush() -> [[UInt8]]? {
        guard !events.isEmpty else { return nil }
        defer {
            events.removeAll(keepingCapacity: true)
            bytes = 0
        }
        return [WireProtocol.signature, Verb.evts.bytes, name, DeliveryBatch.encode(events)]
    }
}
