/// A user's unread totals over the channels they are a member of now
/// (docs/events.md rule 4 and "Mentions").
struct UnreadTotals: Sendable, Equatable {
    /// `total_unread_count`: unread messages over their channels.
    var total = 0
    /// `unread_channels`: channels adding something to ``total``.
    var channels = 0
    /// `total_unread_mentions`: unread mentions over their channels.
    var mentions = 0
}
