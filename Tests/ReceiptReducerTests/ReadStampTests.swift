import EventBusCore
import Testing

@testable import ReceiptReducer

/// A record keeps 32 bits of read stamp (``MemberState/readStamp``): before
/// they run out the channel renumbers its stamps, and every order by stamp
/// stays — readers with equal times keep the order their moves were applied in.
@Suite struct ReadStampTests {
    @Test func stampsRenumberedBeforeTheyRunOutKeepTheReadersOrder() {
        let users = (0..<50).map { "u\($0)" }
        var channel = ChannelState(cid: "messaging:g")
        for user in users.indices {
            let added = channel.addMember(UInt32(user), time: 0, users, flags: [])
            #expect(added)
        }
        for m in 0..<3 { _ = channel.appendMessage(id: "m\(m)", sender: 0, system: false, silent: false) }
        channel.nextReadStamp = Int64(UInt32.max) - 20
        // Every move at the same time: the stamps alone order them.
        var applied: [Int32] = []
        for round in 0..<3 {
            for slot in stride(from: Int32(49), through: 1, by: -2) {
                channel.setRead(slot: slot, to: Int32(round), time: 1_000, flags: [])
                applied.removeAll { $0 == slot }
                applied.append(slot)
            }
        }
        #expect(channel.nextReadStamp <= Int64(UInt32.max))
        #expect(channel.members.allSatisfy { $0.readStamp <= Int64(UInt32.max) })
        #expect(Set(channel.members.map(\.readStamp)).count == channel.members.count, "stamps stay unique")
        let newest = Array(channel.readers.all.suffix(applied.count))
        #expect(newest == applied)
    }
}
