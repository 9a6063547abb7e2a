/// A chat message as the backend keeps it (the bus carries receipts, not texts).
public struct StoredMessage: Codable, Sendable, Equatable {
    /// The message id, unique in its channel.
    public let id: String
    /// The sender.
    public let userID: String
    /// When the backend accepted it: RFC 3339 UTC with milliseconds.
    public let createdAt: String
    /// The text.
    public let text: String
    /// `regular` or `system`.
    public let type: String?
    /// A silent message never counts as unread.
    public let silent: Bool?
    /// For a reply in a thread: the thread's parent message.
    public var parentID: String?
    /// For a reply: whether it is also shown in the channel ("also send to channel").
    public var showInChannel: Bool?

    enum CodingKeys: String, CodingKey {
        case id, text, type, silent
        case userID = "user_id"
        case createdAt = "created_at"
        case parentID = "parent_id"
        case showInChannel = "show_in_channel"
    }
}
