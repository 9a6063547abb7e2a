/// A channel's current members ordered by read position, furthest first, then
/// by user id: the order in which `message_receipts` pages through readers.
///
/// A sorted list of chunks (at most ``maxChunk`` entries each): insert and
/// remove are O(log n + chunk), finding a cursor is O(log n), and a page of `k`
/// readers is O(log n + k).
struct ReaderList: Sendable {
    /// One member's place: their read position (-1 for none) and interned user.
    struct Entry: Sendable, Equatable {
        var position: Int32
        var user: UInt32
    }

    /// Where an entry sits: chunk and offset.
    struct Index: Sendable, Equatable {
        var chunk: Int
        var offset: Int
    }

    static let maxChunk = 1024

    private(set) var chunks: [[Entry]] = []
    /// Entries in all chunks.
    private(set) var count = 0

    /// An empty list.
    init() {}

    /// A list of `entries`, already sorted in list order.
    init(sorted entries: [Entry]) {
        var start = 0
        let half = Self.maxChunk / 2
        while start < entries.count {
            let end = min(start + half, entries.count)
            chunks.append(Array(entries[start..<end]))
            start = end
        }
        count = entries.count
    }

    /// Whether `entry` comes before the key (`position`, `userID`) in list order.
    @inline(__always)
    static func precedes(_ entry: Entry, _ position: Int32, _ userID: String, _ users: [String]) -> Bool {
        if entry.position != position { return entry.position > position }
        return users[Int(entry.user)] < userID
    }

    /// Whether `entry` comes after the key in list order.
    @inline(__always)
    static func follows(_ entry: Entry, _ position: Int32, _ userID: String, _ users: [String]) -> Bool {
        if entry.position != position { return entry.position < position }
        return users[Int(entry.user)] > userID
    }

    /// The first index whose entry does not precede the key (`strict`: that
    /// follows it), or the end index.
    func bound(_ position: Int32, _ userID: String, strict: Bool, _ users: [String]) -> Index {
        func before(_ e: Entry) -> Bool {
            strict ? !Self.follows(e, position, userID, users) : Self.precedes(e, position, userID, users)
        }
        var low = 0
        var high = chunks.count
        while low < high {
            let mid = (low + high) / 2
            // Chunks are never empty, so `last` exists.
            if before(chunks[mid][chunks[mid].count - 1]) { low = mid + 1 } else { high = mid }
        }
        if low == chunks.count { return Index(chunk: chunks.count, offset: 0) }
        let chunk = chunks[low]
        var l = 0
        var h = chunk.count
        while l < h {
            let m = (l + h) / 2
            if before(chunk[m]) { l = m + 1 } else { h = m }
        }
        return Index(chunk: low, offset: l)
    }

    /// Inserts `entry` (not present).
    mutating func insert(_ entry: Entry, _ users: [String]) {
        count += 1
        if chunks.isEmpty {
            chunks.append([entry])
            return
        }
        var index = bound(entry.position, users[Int(entry.user)], strict: false, users)
        if index.chunk == chunks.count {
            index = Index(chunk: chunks.count - 1, offset: chunks[chunks.count - 1].count)
        }
        chunks[index.chunk].insert(entry, at: index.offset)
        if chunks[index.chunk].count > Self.maxChunk {
            let tail = Array(chunks[index.chunk][(Self.maxChunk / 2)...])
            chunks[index.chunk].removeSubrange((Self.maxChunk / 2)...)
            chunks.insert(tail, at: index.chunk + 1)
        }
    }

    /// Removes `entry` (present).
    mutating func remove(_ entry: Entry, _ users: [String]) {
        let index = bound(entry.position, users[Int(entry.user)], strict: false, users)
        guard index.chunk < chunks.count, chunks[index.chunk][index.offset] == entry else {
            preconditionFailure("ReaderList.remove: entry not present")
        }
        count -= 1
        chunks[index.chunk].remove(at: index.offset)
        if chunks[index.chunk].isEmpty { chunks.remove(at: index.chunk) }
    }

    /// The entry at `index`, or `nil` at the end.
    func entry(at index: Index) -> Entry? {
        index.chunk < chunks.count ? chunks[index.chunk][index.offset] : nil
    }

    /// The index after `index`.
    func index(after index: Index) -> Index {
        if index.offset + 1 < chunks[index.chunk].count {
            return Index(chunk: index.chunk, offset: index.offset + 1)
        }
        return Index(chunk: index.chunk + 1, offset: 0)
    }

    /// Every entry in order (for snapshots and tests).
    var all: [Entry] { chunks.flatMap { $0 } }
}
