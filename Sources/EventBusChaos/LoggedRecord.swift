/// One record of the broker's log as the campaign reads it back from the segment files:
/// its SEQ, topic (`STAGE/SUBJECT/TYPE`), dedup identity and event bytes.
public struct LoggedRecord: Sendable, Equatable {
    public let seq: UInt64
    public let topic: String
    public let source: String
    public let id: String
    public let event: [UInt8]

    public init(seq: UInt64, topic: String, source: String, id: String, event: [UInt8]) {
        self.seq = seq
        self.topic = topic
        self.source = source
        self.id = id
        self.event = event
    }

    /// The topic's first segment: `in`, a plugin's stage, `out` or `diag`.
    public var stage: Substring { topic.prefix { $0 != "/" } }

    /// The topic's last segment: the event type.
    public var type: Substring {
        guard let slash = topic.lastIndex(of: "/") else { return "" }
        return topic[topic.index(after: slash)...]
    }

    /// What lies between stage and type: a cid, `@user`, a service.
    public var subject: Substring {
        guard let first = topic.firstIndex(of: "/"), let last = topic.lastIndex(of: "/"), first < last else { return "" }
        return topic[topic.index(after: first)..<last]
    }

    /// Whether a durable consumer of `out` receives it: `out` withholds membership and
    /// settings (private types), `query` and `reply` (docs/protocol.md, STATS `lag`).
    public var isDeliveredFromOut: Bool {
        guard stage == "out" else { return false }
        if type == "query" || type == "reply" { return false }
        return EventTypeRules.isPrivate(type) == false
    }
}
