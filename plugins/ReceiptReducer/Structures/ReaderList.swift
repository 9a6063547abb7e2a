/// A channel's current members by read recency: the order in which
/// `message_receipts` pages through readers, newest first.
///
/// Members are kept by slot, sorted by their key (``MemberState/readTime``,
/// ``MemberState/readStamp``): the time their read watermark last moved,
/// then the channel's read stamp of that move (the order the reducer applied
/// the moves), so equal times keep log order. The newest key is last.
///
/// A sorted list of chunks (at most ``maxChunk`` slots each, never empty), its
/// keys read through the channel's member records — 4 bytes a member here,
/// the stamp's 8 in the record:
/// - a move whose key is the newest (any time not before every other
///   member's, the usual case) appends to the last chunk: O(1) amortized; an
///   older time is a binary search and an insert, O(log n + chunk);
/// - a removal (the old place of a moving member) is a binary search and a
///   remove, O(log n + chunk); a chunk that falls under a quarter full is
///   merged into a neighbour that has room, so chunks stay dense;
/// - a cursor is a binary search, O(log n); each step of a walk, newest to
///   oldest, is O(1).
struct ReaderList: Sendable {
    /// Where a slot sits: chunk and offset.
    struct Index: Sendable, Equatable {
        var chunk: Int
        var offset: Int
    }

    /// A member's place in the order: (read time, read stamp).
    typealias Key = (time: Int64, stamp: Int64)

    static let maxChunk = 1024

    /// Member slots, sorted by key, oldest first.
    private(set) var chunks: [[Int32]] = []
    /// Slots in all chunks.
    private(set) var count = 0

    /// An empty list.
    init() {}

    /// A list of `slots`, already sorted by key, oldest first.
    init(sorted slots: [Int32]) {
        var start = 0
        while start < slots.count {
            let end = min(start + Self.maxChunk, slots.count)
            chunks.append(Array(slots[start..<end]))
            start = end
        }
        count = slots.count
    }

    @inline(__always)
    static func key(_ slot: Int32, _ members: [MemberState]) -> Key {
        let record = members[Int(slot)]
        return (record.readTime, record.readStamp)
    }

    /// Whether `a` comes before (is older than) `b`.
    @inline(__always)
    static func older(_ a: Key, _ b: Key) -> Bool {
        a.time != b.time ? a.time < b.time : a.stamp < b.stamp
    }

    /// The first index whose key is not older than `key`, or the end index. O(log n).
    func lowerBound(_ key: Key, _ members: [MemberState]) -> Index {
        var low = 0
        var high = chunks.count
        while low < high {
            let mid = (low + high) / 2
            // Chunks are never empty, so the last element exists.
            if Self.older(Self.key(chunks[mid][chunks[mid].count - 1], members), key) {
                low = mid + 1
            } else {
                high = mid
            }
        }
        if low == chunks.count { return Index(chunk: chunks.count, offset: 0) }
        let chunk = chunks[low]
        var l = 0
        var h = chunk.count
        while l < h {
            let m = (l + h) / 2
            if Self.older(Self.key(chunk[m], members), key) { l = m + 1 } else { h = m }
        }
        return Index(chunk: low, offset: l)
    }

    /// Inserts `slot` (not present) at its key in `members`.
    mutating func insert(_ slot: Int32, _ members: [MemberState]) {
        count += 1
        let key = Self.key(slot, members)
        guard let lastChunk = chunks.indices.last else {
            chunks.append([slot])
            return
        }
        // The usual move: newer than everyone, onto the end.
        if Self.older(Self.key(chunks[lastChunk][chunks[lastChunk].count - 1], members), key) {
            if chunks[lastChunk].count < Self.maxChunk {
                chunks[lastChunk].append(slot)
            } else {
                var chunk: [Int32] = []
                chunk.reserveCapacity(Self.maxChunk)
                chunk.append(slot)
                chunks.append(chunk)
            }
            return
        }
        let index = lowerBound(key, members)  // not the end: the last slot is not older
        chunks[index.chunk].insert(slot, at: index.offset)
        if chunks[index.chunk].count > Self.maxChunk {
            // Two halves, each allocated to size (a removeSubrange would keep the whole capacity).
            let head = Array(chunks[index.chunk][..<(Self.maxChunk / 2)])
            let tail = Array(chunks[index.chunk][(Self.maxChunk / 2)...])
            chunks[index.chunk] = head
            chunks.insert(tail, at: index.chunk + 1)
        }
    }

    /// Removes `slot` (present, at its key in `members`).
    mutating func remove(_ slot: Int32, _ members: [MemberState]) {
        let index = lowerBound(Self.key(slot, members), members)
        guard index.chunk < chunks.count, chunks[index.chunk][index.offset] == slot else {
            preconditionFailure("ReaderList.remove: slot not present")
        }
        count -= 1
        chunks[index.chunk].remove(at: index.offset)
        let size = chunks[index.chunk].count
        if size == 0 {
            chunks.remove(at: index.chunk)
        } else if size < Self.maxChunk / 4 {
            mergeSparse(index.chunk)
        }
    }

    /// Merges the sparse chunk `c` into a neighbour if both fit in three
    /// quarters of a chunk; the merged chunk is allocated to size, so the
    /// capacity left behind by removals is given back.
    private mutating func mergeSparse(_ c: Int) {
        if !merge(c - 1) { _ = merge(c) }
    }

    /// Merges chunks `left` and `left + 1` if they exist and fit in three quarters of a chunk.
    private mutating func merge(_ left: Int) -> Bool {
        guard left >= 0, left + 1 < chunks.count,
            chunks[left].count + chunks[left + 1].count <= Self.maxChunk * 3 / 4
        else { return false }
        var merged: [Int32] = []
        merged.reserveCapacity(chunks[left].count + chunks[left + 1].count)
        merged.append(contentsOf: chunks[left])
        merged.append(contentsOf: chunks[left + 1])
        chunks[left] = merged
        chunks.remove(at: left + 1)
        return true
    }

    /// The newest slot's index, `nil` when empty.
    var newest: Index? {
        chunks.isEmpty ? nil : Index(chunk: chunks.count - 1, offset: chunks[chunks.count - 1].count - 1)
    }

    /// The index of the newest slot older than `key`, `nil` if there is none. O(log n).
    func newest(olderThan key: Key, _ members: [MemberState]) -> Index? {
        index(before: lowerBound(key, members))
    }

    /// The slot at `index` (not the end).
    func slot(at index: Index) -> Int32 {
        chunks[index.chunk][index.offset]
    }

    /// The index before `index` (the next older slot), `nil` at the oldest.
    func index(before index: Index) -> Index? {
        if index.offset > 0 { return Index(chunk: index.chunk, offset: index.offset - 1) }
        guard index.chunk > 0 else { return nil }
        return Index(chunk: index.chunk - 1, offset: chunks[index.chunk - 1].count - 1)
    }

    /// Every slot, oldest first (for tests).
    var all: [Int32] { chunks.flatMap { $0 } }
}
