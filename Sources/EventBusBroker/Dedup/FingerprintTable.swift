import CPrefetch
#if canImport(Glibc)
import Glibc
#endif

/// A hash table from ``DedupKey`` to a SEQ, made for the broker's hot path.
///
/// A `[DedupKey: UInt64]` hashes each key again with the standard library's
/// seeded hasher and rehashes everything as it grows; a key here is already
/// a well-mixed 128-bit fingerprint, so its high word is the slot. Open
/// addressing with linear probing in one flat array; removal shifts the
/// following entries back, so no tombstones build up in a table that keeps
/// millions of identities coming and going.
///
/// The slots are anonymous memory from `mmap`, which the kernel hands out
/// zeroed — all empty. The mapping is advised to use huge pages, so that
/// lookups spread over it do not each miss the TLB, and every page is touched
/// when the table is made: a table sized for the whole window never stalls
/// the broker to grow, nor to fault in a page (2 MiB cleared, with huge pages)
/// each time a new identity lands on one while it serves. The cost moves to
/// start-up, where it is paid once: about 10–100 ms and the table's memory
/// (48 MiB for the default window of 1,000,000 identities).
struct FingerprintTable {
    fileprivate struct Slot {
        var high: UInt64
        var low: UInt64
        /// 0 marks an empty slot: SEQs start at 1.
        var seq: UInt64

        static let empty = Slot(high: 0, low: 0, seq: 0)
    }

    private var slots: SlotMemory
    private var mask: Int
    /// The number of keys held.
    private(set) var count = 0

    /// A table that holds `capacity` keys before it first grows.
    init(capacity: Int) {
        var size = 16
        while size * 3 < capacity * 4 { size *= 2 }
        slots = SlotMemory(count: size)
        mask = size - 1
    }

    /// Gives this table its own slots before a change, if a copy of it shares them.
    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&slots) { slots = slots.copy() }
    }

    /// Where `key` is, or the empty slot that ends its probe run.
    private func probe(_ key: DedupKey) -> (index: Int, found: Bool) {
        var index = Int(truncatingIfNeeded: key.high) & mask
        while true {
            let slot = slots.base[index]
            if slot.seq == 0 { return (index, false) }
            if slot.high == key.high && slot.low == key.low { return (index, true) }
            index = (index + 1) & mask
        }
    }

    /// Starts loading `key`'s home slot into the cache, so that a lookup a
    /// little later does not wait for memory: the table of a full window is
    /// tens of MB, and every new key's slot is somewhere else in it.
    func prefetch(_ key: DedupKey) {
        eventbus_prefetch(slots.base + (Int(truncatingIfNeeded: key.high) & mask))
    }

    /// The SEQ stored for `key`, if any.
    func seq(for key: DedupKey) -> UInt64? {
        let (index, found) = probe(key)
        return found ? slots.base[index].seq : nil
    }

    /// Stores `seq` (≥ 1) for `key`; returns the SEQ it replaced, if any.
    @discardableResult
    mutating func update(_ seq: UInt64, for key: DedupKey) -> UInt64? {
        precondition(seq > 0, "SEQ 0 marks an empty slot")
        makeUnique()
        if (count + 1) * 4 > slots.count * 3 { grow() }
        let (index, found) = probe(key)
        guard found else {
            slots.base[index] = Slot(high: key.high, low: key.low, seq: seq)
            count += 1
            return nil
        }
        defer { slots.base[index].seq = seq }
        return slots.base[index].seq
    }

    /// Removes `key`; returns its SEQ, if it was there.
    @discardableResult
    mutating func remove(_ key: DedupKey) -> UInt64? {
        let (index, found) = probe(key)
        guard found else { return nil }
        makeUnique()
        let slots = self.slots.base
        let removed = slots[index].seq
        // Backward shift: move up each later entry of the run that may sit in the hole.
        var hole = index
        var next = (hole + 1) & mask
        while slots[next].seq != 0 {
            let home = Int(truncatingIfNeeded: slots[next].high) & mask
            // The entry at `next` may move to `hole` unless its home lies in (hole, next].
            let distanceToHome = (next - home) & mask
            let distanceToHole = (next - hole) & mask
            if distanceToHome >= distanceToHole {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = .empty
        count -= 1
        return removed
    }

    private mutating func grow() {
        let old = slots
        slots = SlotMemory(count: old.count * 2)
        mask = slots.count - 1
        for slot in UnsafeBufferPointer(start: old.base, count: old.count) where slot.seq != 0 {
            var index = Int(truncatingIfNeeded: slot.high) & mask
            while slots.base[index].seq != 0 { index = (index + 1) & mask }
            slots.base[index] = slot
        }
    }
}

/// Zero-filled slots in anonymous memory, returned to the system when released.
private final class SlotMemory {
    let base: UnsafeMutablePointer<FingerprintTable.Slot>
    let count: Int

    init(count: Int) {
        let bytes = count * MemoryLayout<FingerprintTable.Slot>.stride
        let memory = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let memory, memory != MAP_FAILED else {
            fatalError("the dedup table could not map \(bytes) bytes (errno \(errno))")
        }
        // Huge pages where the kernel allows them (transparent huge pages in
        // `madvise` mode or `always`): every lookup lands on a random slot of
        // tens of MB, which with 4 KiB pages is a TLB miss and a page walk each.
        // A kernel without them refuses the advice, and the table works as it is.
        _ = madvise(memory, bytes, MADV_HUGEPAGE)
        // One write per page faults them all in now (zeroes: every slot stays empty).
        var offset = 0
        while offset < bytes {
            memory.storeBytes(of: 0, toByteOffset: offset, as: UInt8.self)
            offset += 4096
        }
        base = memory.bindMemory(to: FingerprintTable.Slot.self, capacity: count)
        self.count = count
    }

    deinit { munmap(base, count * MemoryLayout<FingerprintTable.Slot>.stride) }

    /// A copy with the same slots.
    func copy() -> SlotMemory {
        let copy = SlotMemory(count: count)
        copy.base.update(from: base, count: count)
        return copy
    }
}
