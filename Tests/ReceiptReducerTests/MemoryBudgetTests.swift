import Testing

@testable import ReceiptReducer

/// The memory goals (docs/performance.md, "Goals and current figures"),
/// estimated from the records' layouts: ≤ 100 bytes per (channel, member) and
/// ≤ 48 bytes per retained message (ids of up to 15 UTF-8 bytes are stored
/// inline in their `String`; longer ones add their bytes on the heap).
@Suite struct MemoryBudgetTests {
    /// Bytes per (channel, member): the record, its slot-index entry (4 bytes at
    /// ≥ 37.5 % load), its reader-list slot and member-order entries (chunks ≥ half
    /// full), the user's channel list entry, and for a member who joined after a
    /// message their late-join entry.
    static var bytesPerMember: Int {
        let record = MemoryLayout<MemberState>.stride
        let slotEntry = MemoryLayout<Int32>.stride * 8 / 3
        let readerEntry = MemoryLayout<Int32>.stride * 2
        let orderEntry = MemoryLayout<UInt32>.stride * 2
        let channelListEntry = MemoryLayout<Int32>.stride
        let lateJoinEntry = MemoryLayout<Int32>.stride
        return record + slotEntry + readerEntry + orderEntry + channelListEntry + lateJoinEntry
    }

    /// Bytes per message: id, sender+flags, id index slot (≥ 37.5 % load),
    /// countable, read and delivered Fenwick elements, the sender's own-position entry.
    static var bytesPerMessage: Int {
        MemoryLayout<String>.stride + MemoryLayout<UInt32>.stride + MemoryLayout<Int32>.stride * 8 / 3
            + MemoryLayout<Int32>.stride * 3 + MemoryLayout<Int32>.stride
    }

    /// 40 bytes: the watermarks, times, stamp, settings, when the member joined
    /// and where their history is.
    @Test func memberStateFitsTheBudget() {
        #expect(MemoryLayout<MemberState>.stride == 40)
        #expect(Self.bytesPerMember <= 100, "\(Self.bytesPerMember) bytes per member")
    }

    /// When the watermarks passed the messages: nothing for a member who moved
    /// forward once, 24 bytes for one with more to remember (docs/events.md
    /// "Lists"), within the budget with the rest.
    @Test func aWatermarkHistoryIsTwentyFourBytes() {
        #expect(MemoryLayout<CompactHistory>.stride == 24)
        let active = Self.bytesPerMember + MemoryLayout<CompactHistory>.stride
        #expect(active <= 100, "\(active) bytes per member with a history")
    }

    /// Thread state exists only for threads: nothing in the per-member or
    /// per-message records, 152 bytes a participant (docs/events.md "thread_state").
    @Test func threadsAddNothingToMembersOrMessages() {
        #expect(MemoryLayout<MemberState>.stride == 40)
        #expect(MemoryLayout<ThreadMember>.stride == 152)
    }

    @Test func messageStateFitsTheBudget() {
        #expect(Self.bytesPerMessage <= 48, "\(Self.bytesPerMessage) bytes per message")
    }
}
