/// A member's ``Crossings`` for both watermarks: when each passed a message
/// (docs/events.md rule 13). A channel keeps one only for the members whose
/// crossings are more than their watermarks' last moves
/// (``ChannelState/histories``).
struct WatermarkHistory: Sendable, Equatable {
    /// The read watermark's crossings.
    var read: Crossings
    /// The delivered watermark's crossings.
    var delivered: Crossings

    /// The history a record implies alone: each watermark passed everything up
    /// to it at its last move.
    init(implied record: MemberState) {
        read = Crossings(position: record.readPosition, time: record.readTime)
        delivered = Crossings(position: record.deliveredPosition, time: record.deliveredTime)
    }

    init(read: Crossings, delivered: Crossings) {
        self.read = read
        self.delivered = delivered
    }
}
