/// The `message` object of a `message.new` event.
public struct NewMessage: Sendable, Equatable, Hashable {
    /// How a message counts toward unread.
    public enum Kind: String, Sendable, Equatable, Hashable, CaseIterable {
        /// An ordinary message; counts as unread for the other members.
        case regular
        /// A system message; never counts as unread.
        case system
    }

    /// The message id (`message.id`).
    public var id: String
    /// The sender (`message.user_id`).
    public var userID: String
    /// When it was sent (`message.created_at`), a strict RFC 3339 UTC time.
    public var createdAt: String
    /// `message.mentioned_users`: the users the message mentions, as given
    /// (repeats and the sender included); empty when omitted.
    public var mentionedUsers: [String]
    /// `message.type`; `regular` when omitted.
    public var kind: Kind
    /// `message.silent`; `false` when omitted. Silent messages never count as unread.
    public var silent: Bool
    /// `message.parent_id`: the message whose thread this one replies in; `nil` for a channel message.
    public var parentID: String?
    /// `message.show_in_channel`; `false` when omitted. A thread reply also shown in the channel.
    public var showInChannel: Bool

    /// Creates a message description.
    public init(
        id: String, userID: String, createdAt: String, kind: Kind = .regular, silent: Bool = false,
        mentionedUsers: [String] = [], parentID: String? = nil, showInChannel: Bool = false
    ) {
        self.id = id
        self.userID = userID
        self.createdAt = createdAt
        self.kind = kind
        self.silent = silent
        self.mentionedUsers = mentionedUsers
        self.parentID = parentID
        self.showInChannel = showInChannel
    }
}
