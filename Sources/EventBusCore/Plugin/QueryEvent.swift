
/// A `query` event: a REQ the broker turned into an event, for a plugin to answer.
public struct QueryEvent: Sendable {
    /// The service named in the REQ (also the event's subject).
    public let service: String
    /// The method, such as `unread_counts`.
    public let method: String
    /// The params object.
    public let params: JSONValue
    /// The token the reply must carry.
    public let replyTo: String
    /// The query's time, reused for the reply.
    public let time: String?

    /// Reads a query from an event of type `query`; `nil` for any other event.
    public init?(_ event: PluginEvent) {
        guard event.type == EventType.query.rawValue, let envelope = try? event.envelope(),
              let replyTo = envelope.replyto, let data = envelope.data,
              case .string(let method)? = data["method"] else { return nil }
        service = envelope.subject
        self.method = method
        params = data["params"] ?? .object([])
        self.replyTo = replyTo
        time = envelope.time
    }
}

/// A `reply` event travelling the pipeline towards `out`: an answer a plugin
/// before this one gave to a query, for a filter to pass on or replace.
public struct QueryReply: Sendable {
    /// The service that answered (the event's subject).
    public let service: String
    /// The token naming the requester.
    public let replyTo: String
    /// The reply's time, reused for a replacement.
    public let time: String?
    /// The whole `data` object: `result` or `error`, and any fields for later stages.
    public let data: JSONValue

    /// Reads a reply from an event of type `reply`; `nil` for any other event.
    public init?(_ event: PluginEvent) {
        guard event.type == EventType.reply.rawValue, let envelope = try? event.envelope(),
              let replyTo = envelope.replyto, let data = envelope.data else { return nil }
        service = envelope.subject
        self.replyTo = replyTo
        time = envelope.time
        self.data = data
    }
}
