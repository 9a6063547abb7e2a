import EventBusCore
import Testing

@testable import ReceiptReducer

/// ``SlotIndex`` against a map, over enough users to grow the table many times.
@Suite struct SlotIndexTests {
    @Test func everyUserFindsTheirSlotAndNoOneElseDoes() {
        var rng = SplitMix64(seed: 17)
        var index = SlotIndex()
        var members: [MemberState] = []
        var model: [UInt32: Int32] = [:]
        while members.count < 20_000 {
            let user = UInt32(rng.below(1_000_000))
            guard model[user] == nil else { continue }
            let slot = Int32(members.count)
            index.insert(slot, user: user, members: members)
            members.append(MemberState(
                user: user, readPosition: -1, deliveredPosition: -1, isMember: true, readTime: 0, deliveredTime: 0,
                readStamp: Int64(slot)))
            model[user] = slot
        }
        #expect(index.count == members.count)
        for (user, slot) in model where index.slot(of: user, in: members) != slot {
            Issue.record("user \(user): \(String(describing: index.slot(of: user, in: members))), not \(slot)")
        }
        for user in UInt32(1_000_000)..<1_001_000 { #expect(index.slot(of: user, in: members) == nil) }
    }
}
