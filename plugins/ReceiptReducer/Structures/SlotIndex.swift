/// An open-addressing hash index from interned user to member slot, storing
/// only `Int32` slots (the users live in the records, ``MemberState/user``).
///
/// About 4 / 0.375…0.75 bytes per member instead of a `[UInt32: Int32]`
/// entry's 8. A user's slot never changes once given (an erased record's
/// slot is the same user's again), so slots are never removed.
struct SlotIndex: Sendable {
    /// Slots, or -1 when empty. Capacity is a power of two.
    private var table: [Int32] = Array(repeating: -1, count: 8)
    /// Slots stored.
    private(set) var count = 0

    /// An empty index.
    init() {}

    /// The slot of `user`, looked up in `members`.
    func slot(of user: UInt32, in members: [MemberState]) -> Int32? {
        let mask = table.count - 1
        var i = Self.hash(user) & mask
        while true {
            let slot = table[i]
            if slot < 0 { return nil }
            if members[Int(slot)].user == user { return slot }
            i = (i + 1) & mask
        }
    }

    /// Adds `slot` for `user` (not present); `members` holds the slots already stored.
    mutating func insert(_ slot: Int32, user: UInt32, members: [MemberState]) {
        if (count + 1) * 4 > table.count * 3 {
            let old = table
            table = Array(repeating: -1, count: old.count * 2)
            for stored in old where stored >= 0 { place(stored, user: members[Int(stored)].user) }
        }
        place(slot, user: user)
        count += 1
    }

    private mutating func place(_ slot: Int32, user: UInt32) {
        let mask = table.count - 1
        var i = Self.hash(user) & mask
        while table[i] >= 0 { i = (i + 1) & mask }
        table[i] = slot
    }

    /// Fibonacci hashing: interned users are dense small numbers.
    private static func hash(_ user: UInt32) -> Int {
        Int(truncatingIfNeeded: (UInt64(user) &* 0x9E37_79B9_7F4A_7C15) >> 32)
    }
}
