/// Why an ack (or a `message.new`, or a membership change) could not apply
/// (docs/events.md rule 5), in order of precedence: the first that holds is reported.
public enum RejectionReason: String, Sendable, CaseIterable, Error {
    /// The channel was never created.
    case unknownChannel = "unknown_channel"
    /// The user is not a member of the channel now.
    case notMember = "not_member"
    /// The user is banned from acknowledging in the channel, or everywhere (`user.banned`).
    case banned
    /// The channel has no message with that id.
    case unknownMessage = "unknown_message"
    /// `notification.mark_unread` from the user's own message.
    case ownMessage = "own_message"
}
