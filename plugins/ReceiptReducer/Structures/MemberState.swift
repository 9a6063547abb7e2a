import EventBusCore

/// One (channel, user) record: watermarks as message positions, times as codes.
///
/// 48 bytes (the settings fill the padding after ``isMember`` and ``joinedAt``). Positions are indices in the channel's message sequence, -1 for
/// "before the first message"; times are ``TimeTable`` codes.
struct MemberState: Sendable, Equatable {
    /// The interned user.
    var user: UInt32
    /// The read watermark's position.
    var readPosition: Int32
    /// The delivered watermark's position (behind ``readPosition`` only when a read was
    /// shown while delivery receipts were hidden: docs/events.md rule 19).
    var deliveredPosition: Int32
    /// Whether the user is a member now (a removed member's record is kept).
    var isMember: Bool
    /// Whether the member muted the channel (`member.updated`).
    var muted = false
    /// What the channel adds to the member's totals (`member.updated`).
    var countUnread = CountPreference.all
    /// Whether the member hid the channel (`channel.hidden`): nothing of it is
    /// unread for them until `channel.visible` or the next channel message.
    var hidden = false
    /// When the read watermark last moved.
    var readTime: Int64
    /// When the delivered watermark last moved.
    var deliveredTime: Int64
    /// The channel's latest message when the member first joined, -1 if none:
    /// they count for the messages after it only (docs/events.md rule 8).
    var joinedAt: Int32 = -1
    /// Whether the record was erased (`user.deleted` with `hard_delete`): it
    /// counts in nothing, and a member added again starts as a new member.
    var erased = false
    /// The channel's read stamp of the read watermark's last move (or of the
    /// join that set it): unique in the channel, increasing in the order the
    /// reducer applied the moves. Orders readers whose ``readTime`` is equal.
    var readStamp: Int64
}
