/// One thread of a channel (docs/events.md rule 14): its parent, its replies
/// and its participants.
///
/// Kept only for threads that exist (a message with at least one reply), so
/// channels without threads pay nothing: 4 bytes a reply here plus the
/// channel's reply maps, 152 bytes a participant (``ThreadMember``).
/// A thread's counts are computed from its replies, O(replies after the
/// watermark), and a participant is found by a scan, O(participants): threads
/// are small next to channels.
struct ThreadState: Sendable {
    /// The parent message's position.
    let parent: Int32
    /// The replies' positions, in order.
    var replies: [Int32] = []
    /// The participants, in the order they joined the thread.
    var participants: [ThreadMember] = []

    init(parent: Int32) {
        self.parent = parent
    }

    /// The index in ``participants`` of `user`, if they take part.
    func participant(_ user: UInt32) -> Int? {
        participants.firstIndex { $0.user == user }
    }

    /// The last thread message before `position`: the reply before it, or the parent.
    func message(before position: Int32) -> Int32 {
        let i = ChannelState.lowerBound(replies, position)
        return i > 0 ? replies[i - 1] : parent
    }
}
