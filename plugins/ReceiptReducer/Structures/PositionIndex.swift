/// An open-addressing hash index from message id to position, storing only
/// `Int32` positions (the ids themselves live in the channel's id array).
///
/// About 4 / 0.5…0.75 bytes per message instead of a `[String: Int32]` entry's
/// second copy of the string. Positions are never removed one by one: a
/// truncation builds the index anew over the ids that remain.
struct PositionIndex: Sendable {
    /// Slots holding a position, or -1 when empty. Capacity is a power of two.
    private var slots: [Int32] = Array(repeating: -1, count: 8)
    /// Positions stored.
    private(set) var count = 0

    /// An empty index.
    init() {}

    /// The index of every non-empty id in `ids` (empty ones are gone: a truncation's).
    init(ids: [String]) {
        for position in ids.indices where !ids[position].isEmpty {
            insert(Int32(position), in: ids)
        }
    }

    /// The position of `id`, looked up in `ids`.
    func position(of id: String, in ids: [String]) -> Int32? {
        let mask = slots.count - 1
        var i = Self.hash(id) & mask
        while true {
            let slot = slots[i]
            if slot < 0 { return nil }
            if ids[Int(slot)] == id { return slot }
            i = (i + 1) & mask
        }
    }

    /// Adds `position`, whose id is `ids[position]` (not already present).
    mutating func insert(_ position: Int32, in ids: [String]) {
        if (count + 1) * 4 > slots.count * 3 {
            grow(ids)
        }
        place(position, id: ids[Int(position)])
        count += 1
    }

    private mutating func place(_ position: Int32, id: String) {
        let mask = slots.count - 1
        var i = Self.hash(id) & mask
        while slots[i] >= 0 { i = (i + 1) & mask }
        slots[i] = position
    }

    private mutating func grow(_ ids: [String]) {
        let old = slots
        slots = Array(repeating: -1, count: old.count * 2)
        for slot in old where slot >= 0 {
            place(slot, id: ids[Int(slot)])
        }
    }

    /// FNV-1a over the UTF-8 bytes: deterministic, cheap for short ids.
    private static func hash(_ id: String) -> Int {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 {
            h ^= UInt64(byte)
            h &*= 0x0000_0100_0000_01B3
        }
        return Int(truncatingIfNeeded: h ^ (h >> 29))
    }
}
