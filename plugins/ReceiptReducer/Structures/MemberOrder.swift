/// A channel's current members sorted by user id: the order in which
/// `channel_state` pages through members.
///
/// A sorted list of chunks (at most ``maxChunk`` interned users each, like
/// ``ReaderList``): insert and remove are O(log n + chunk), seeking past a
/// cursor's user id is a binary search, O(log n), and a page of `k` members is
/// O(log n + k) — no scan of the members before the cursor.
struct MemberOrder: Sendable {
    /// Where a member sits: chunk and offset.
    struct Index: Sendable, Equatable {
        var chunk: Int
        var offset: Int
    }

    static let maxChunk = 1024

    /// Interned users, sorted by their user id; never an empty chunk.
    private(set) var chunks: [[UInt32]] = []
    /// Members in all chunks.
    private(set) var count = 0

    /// An empty order.
    init() {}

    /// An order of `users`, already sorted by user id.
    init(sorted members: [UInt32]) {
        var start = 0
        let half = Self.maxChunk / 2
        while start < members.count {
            let end = min(start + half, members.count)
            chunks.append(Array(members[start..<end]))
            start = end
        }
        count = members.count
    }

    /// The first index whose user id is not less than `userID` (`strict`:
    /// greater than it), or the end index. O(log n).
    func bound(_ userID: String, strict: Bool, _ users: [String]) -> Index {
        func before(_ user: UInt32) -> Bool {
            strict ? users[Int(user)] <= userID : users[Int(user)] < userID
        }
        var low = 0
        var high = chunks.count
        while low < high {
            let mid = (low + high) / 2
            // Chunks are never empty, so the last element exists.
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

    /// The start index: the first member, or the end of an empty order.
    var startIndex: Index { Index(chunk: 0, offset: 0) }

    /// Inserts `user` (not present).
    mutating func insert(_ user: UInt32, _ users: [String]) {
        count += 1
        if chunks.isEmpty {
            chunks.append([user])
            return
        }
        var index = bound(users[Int(user)], strict: false, users)
        if index.chunk == chunks.count {
            index = Index(chunk: chunks.count - 1, offset: chunks[chunks.count - 1].count)
        }
        chunks[index.chunk].insert(user, at: index.offset)
        if chunks[index.chunk].count > Self.maxChunk {
            let tail = Array(chunks[index.chunk][(Self.maxChunk / 2)...])
            chunks[index.chunk].removeSubrange((Self.maxChunk / 2)...)
            chunks.insert(tail, at: index.chunk + 1)
        }
    }

    /// Removes `user` (present).
    mutating func remove(_ user: UInt32, _ users: [String]) {
        let index = bound(users[Int(user)], strict: false, users)
        guard index.chunk < chunks.count, chunks[index.chunk][index.offset] == user else {
            preconditionFailure("MemberOrder.remove: member not present")
        }
        count -= 1
        chunks[index.chunk].remove(at: index.offset)
        if chunks[index.chunk].isEmpty { chunks.remove(at: index.chunk) }
    }

    /// The member at `index`, or `nil` at the end.
    func member(at index: Index) -> UInt32? {
        index.chunk < chunks.count ? chunks[index.chunk][index.offset] : nil
    }

    /// The index after `index` (not the end).
    func index(after index: Index) -> Index {
        if index.offset + 1 < chunks[index.chunk].count {
            return Index(chunk: index.chunk, offset: index.offset + 1)
        }
        return Index(chunk: index.chunk + 1, offset: 0)
    }

    /// Every member in order (for tests).
    var all: [UInt32] { chunks.flatMap { $0 } }
}
