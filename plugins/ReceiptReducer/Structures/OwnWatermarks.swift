/// A member's own watermarks, where they differ from the public ones
/// (docs/events.md rules 6 and 18–20).
///
/// The public watermarks (``MemberState``) are what everyone else sees, in
/// events and replies; they never move back, and they move only with an ack
/// made while that receipt is shown. The own watermarks are what the member
/// and their devices see: their unread counts and badges follow the own read
/// watermark. The two part when the member marks a message unread (only the
/// own read watermark moves back) and when they ack while a receipt is hidden
/// (only the own watermark moves forward). A channel keeps an entry only for
/// the members whose own watermarks differ from the public ones
/// (``ChannelState/own``): everyone else pays nothing.
struct OwnWatermarks: Sendable, Equatable {
    /// The own read watermark's position.
    var readPosition: Int32
    /// When it last moved (a ``TimeTable`` code).
    var readTime: Int64
    /// The own delivered watermark's position: the furthest delivery or read
    /// the member acked, shown or not.
    var deliveredPosition: Int32

    /// The own watermarks of a member whose own and public watermarks agree.
    init(public record: MemberState) {
        readPosition = record.readPosition
        readTime = record.readTime
        deliveredPosition = record.deliveredPosition
    }

    /// Whether these are just the public watermarks of `record` (no entry needed).
    func agree(with record: MemberState) -> Bool {
        readPosition == record.readPosition && readTime == record.readTime
            && deliveredPosition == record.deliveredPosition
    }
}
