import EventBusCore
import Testing

@testable import ReceiptReducer

/// ``ReaderList`` on its own, against a sort: random moves (mostly to the
/// newest key, some dated in the past), leaves and returns over thousands of
/// slots, so chunks fill, split, drain and merge.
@Suite struct ReaderListTests {
    /// Checks the list holds exactly the current slots sorted by key, in chunks
    /// of 1…maxChunk, with no sparse chunk beside a neighbour it fits with.
    static func problem(_ list: ReaderList, _ members: [MemberState]) -> String? {
        let want = members.indices.filter { members[$0].isMember }.map { Int32($0) }.sorted {
            ReaderList.older(ReaderList.key($0, members), ReaderList.key($1, members))
        }
        guard list.all == want, list.count == want.count else { return "order differs" }
        for (i, chunk) in list.chunks.enumerated() {
            guard (1...ReaderList.maxChunk).contains(chunk.count) else { return "chunk \(i) holds \(chunk.count)" }
        }
        return nil
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func movesLeavesAndReturnsKeepTheOrder(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var members: [MemberState] = []
        var list = ReaderList()
        var stamp: Int64 = 0
        var clock: Int64 = 1_000_000
        for user in 0..<3_000 {
            members.append(MemberState(
                user: UInt32(user), readPosition: -1, deliveredPosition: -1, isMember: true, readTime: clock,
                deliveredTime: clock, readStamp: stamp))
            stamp += 1
            list.insert(Int32(user), members)
        }
        #expect(Self.problem(list, members) == nil)
        var shrank = false
        for round in 0..<30_000 {
            let chunks = list.chunks.count
            let slot = Int32(rng.below(members.count))
            if !members[Int(slot)].isMember {
                members[Int(slot)].isMember = true
                list.insert(slot, members)
            } else if rng.chance(3) {
                list.remove(slot, members)
                members[Int(slot)].isMember = false
            } else {
                list.remove(slot, members)
                clock += Int64(rng.below(3))  // equal times are common
                members[Int(slot)].readTime = rng.chance(10) ? clock - Int64(rng.below(1_000_000)) : clock
                members[Int(slot)].readStamp = stamp
                stamp += 1
                list.insert(slot, members)
            }
            if round % 500 == 0, let problem = Self.problem(list, members) {
                Issue.record("seed \(seed) round \(round): \(problem)")
                return
            }
            shrank = shrank || list.chunks.count < chunks
        }
        #expect(Self.problem(list, members) == nil)
        #expect(shrank, "no chunk was ever merged or emptied")
        // Drain most members: a chunk under a quarter full merges with a neighbour it fits
        // with, so no two neighbours are both under a quarter: on average over an eighth full.
        for slot in members.indices where members[slot].isMember && slot % 10 != 0 {
            list.remove(Int32(slot), members)
            members[slot].isMember = false
        }
        #expect(Self.problem(list, members) == nil)
        let left = members.filter(\.isMember).count
        #expect(list.chunks.count <= left * 8 / ReaderList.maxChunk + 2, "\(list.chunks.count) chunks for \(left)")
    }

    @Test func aCursorKeyFindsTheNextOlderSlotWhetherOrNotItIsHeld() {
        var members: [MemberState] = []
        var list = ReaderList()
        for i in 0..<5 {
            members.append(MemberState(
                user: UInt32(i), readPosition: 0, deliveredPosition: 0, isMember: true, readTime: Int64(10 * i),
                deliveredTime: 0, readStamp: Int64(i)))
            list.insert(Int32(i), members)
        }
        func older(_ time: Int64, _ stamp: Int64) -> Int32? {
            list.newest(olderThan: (time, stamp), members).map { list.slot(at: $0) }
        }
        #expect(list.newest.map { list.slot(at: $0) } == 4)
        #expect(older(20, 2) == 1)  // a held key: the one before it
        #expect(older(25, 99) == 2)  // a key no one holds
        #expect(older(20, 1) == 1)  // the same time, an earlier stamp: slot 2 (stamp 2) is newer
        #expect(older(0, 0) == nil)
        #expect(older(Int64.max, 0) == 4)
    }
}
