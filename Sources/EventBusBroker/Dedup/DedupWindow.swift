import DequeModule
#if EVENTBUS_MUTANTS
import EventBusCore
#endif

/// Remembers recently logged event identities and the SEQ each got.
///
/// An identity is kept while it is younger than `age`, or while it is among the
/// newest `minimumCount` identities, and never beyond `maximumCount` identities
/// (which bounds memory at roughly 70 bytes an identity).
struct DedupWindow {
    private struct Entry {
        let key: DedupKey
        let seq: UInt64
        let timestamp: UInt64
    }

    /// How long an identity is remembered, in milliseconds.
    let ageMilliseconds: UInt64
    /// Identities kept whatever their age.
    let minimumCount: Int
    /// Identities kept at most.
    let maximumCount: Int

    private var seqs: FingerprintTable
    private var order: Deque<Entry> = []

    init(ageMilliseconds: UInt64, minimumCount: Int, maximumCount: Int) {
        precondition(minimumCount <= maximumCount, "the dedup window's minimum exceeds its maximum")
        self.ageMilliseconds = ageMilliseconds
        self.minimumCount = minimumCount
        self.maximumCount = maximumCount
        // Growing a large table rehashes every entry and faults in new pages
        // while the broker waits: size both for the window's minimum now. Neither
        // touches memory before it is used (the table's slots are zero pages, the
        // queue's reserve is uninitialized).
        seqs = FingerprintTable(capacity: minimumCount)
        order.reserveCapacity(minimumCount)
    }

    /// The number of identities held.
    var count: Int { seqs.count }

    /// Starts loading where `key` would be, for a lookup soon (see ``FingerprintTable/prefetch(_:)``).
    func prefetch(_ key: DedupKey) { seqs.prefetch(key) }

    /// The SEQ logged for `key`, if it is still in the window.
    func seq(for key: DedupKey) -> UInt64? {
        #if EVENTBUS_MUTANTS
        if Mutant.active == .dedupWindowZero { return nil }
        #endif
        return seqs.seq(for: key)
    }

    /// Records that `key` was logged as `seq` at `timestamp` (ms).
    mutating func insert(_ key: DedupKey, seq: UInt64, timestamp: UInt64) {
        if seqs.update(seq, for: key) == nil {
            order.append(Entry(key: key, seq: seq, timestamp: timestamp))
        }
    }

    /// Forgets every identity logged after `seq` (used when an append is rolled back).
    mutating func removeAll(after seq: UInt64) {
        while let last = order.last, last.seq > seq {
            order.removeLast()
            seqs.remove(last.key)
        }
    }

    /// Drops identities that have left the window as of `now` (ms).
    mutating func expire(now: UInt64) {
        while let first = order.first {
            let old = now >= first.timestamp && now - first.timestamp > ageMilliseconds
            guard order.count > maximumCount || (order.count > minimumCount && old) else { break }
            order.removeFirst()
            if seqs.seq(for: first.key) == first.seq { seqs.remove(first.key) }
        }
    }
}
