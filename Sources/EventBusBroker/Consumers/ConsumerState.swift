import DequeModule

/// A durable consumer as the broker keeps it.
final class ConsumerState {
    /// The consumer's name, `[a-z0-9_.-]{1,64}`.
    let name: String
    /// ``name`` as it travels in `EVT` and `EVTS` frames.
    let nameBytes: [UInt8]
    /// Topic prefixes it receives.
    var prefixes: [[UInt8]] = []
    /// The stages its prefixes can match; `nil` when a prefix spans stages.
    var stages: [String]?
    /// The peer currently receiving, `nil` while disconnected or cancelled.
    var peer: [UInt8]?
    /// The authenticated client (ZAP user id) that attached it last; `nil` without keys.
    var client: String?
    /// Events sent and not yet acknowledged, at most.
    var credit = 1
    /// Whether its peer asked for batched delivery (`EVTS`) in `HELLO`.
    var batched = false
    /// The last acknowledged SEQ (0 if none); persisted.
    var acked: UInt64
    /// The next SEQ to look at for delivery.
    var nextSeq: UInt64 = 1
    /// SEQs sent and not yet acknowledged, in order. Unchecked for exclusivity as
    /// ``BrokerCore``'s state is (one thread, nothing lent): each ACK and delivery updates it.
    @exclusivity(unchecked) var inFlight: Deque<UInt64> = []

    init(name: String, acked: UInt64) {
        self.name = name
        nameBytes = Array(name.utf8)
        self.acked = acked
    }

    /// Whether `topic` is one of this consumer's.
    func matches(_ topic: [UInt8]) -> Bool {
        prefixes.contains { prefix in topic.count >= prefix.count && topic.starts(with: prefix) }
    }

    /// Records a cumulative acknowledgement of everything up to `seq`.
    func acknowledge(_ seq: UInt64) {
        while let first = inFlight.first, first <= seq { inFlight.removeFirst() }
        if seq > acked { acked = seq }
        if nextSeq <= seq { nextSeq = seq + 1 }
    }

    /// Forgets what was in flight so that it is sent again from `seq`.
    func rewind(to seq: UInt64) {
        inFlight.removeAll()
        nextSeq = seq
    }
}
