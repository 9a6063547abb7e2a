/// What a member's channel adds to their unread totals (`member.updated`'s
/// `count_unread`, docs/events.md "Muted channels and count preferences").
public enum CountPreference: String, Sendable, Equatable, Hashable, CaseIterable {
    /// Every unread message counts (the default).
    case all
    /// Only unread mentions count.
    case mentions
    /// Nothing counts toward the totals.
    case off
}
