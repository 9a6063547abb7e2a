/// One participant's record in a thread (docs/events.md rule 14): their
/// thread watermarks as positions in the channel's message sequence, the
/// thread's parent standing for "no reply" (shown as `null`), with times, the
/// read stamp of the last read move (from the channel's stamps) and when each
/// watermark passed each reply.
struct ThreadMember: Sendable, Equatable {
    /// The interned user.
    var user: UInt32
    /// The read watermark: a reply's position, or the parent's.
    var readPosition: Int32
    /// The delivered watermark (behind ``readPosition`` only after a read
    /// shown while delivery receipts were hidden: rule 19).
    var deliveredPosition: Int32
    /// When the read watermark last moved (``TimeTable/none`` before any move).
    var readTime: Int64
    /// When the delivered watermark last moved.
    var deliveredTime: Int64
    /// The channel's read stamp of the read watermark's last move.
    var readStamp: Int64
    /// The thread message before the one they joined in with (the parent for
    /// the author): they count for the replies after it only (rule 14).
    var joinedAt: Int32
    /// When each watermark passed each reply (rule 13), kept for every participant.
    var history: WatermarkHistory
    /// The participant's own thread watermarks (rules 6, 18 and 19, as
    /// ``OwnWatermarks`` for a channel): the read one moves back with a mark
    /// unread, and both move forward with acks made while hidden; the
    /// fields above are the public ones. Kept in the record: threads are small.
    var ownRead: Int32
    var ownReadTime: Int64
    var ownDelivered: Int32
}
