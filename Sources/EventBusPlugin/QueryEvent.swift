import EventBus

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
