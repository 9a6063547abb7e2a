/// A growable byte buffer for encoded records not yet written to the file.
///
/// Owned by one ``SegmentLog``; not thread-safe.
final class WriteBuffer {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 4096)
        self.base = .allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit { base.deallocate() }

    /// Makes room for `additional` more bytes.
    func reserve(_ additional: Int) {
        let needed = count + additional
        guard needed > capacity else { return }
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        newBase.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// Encodes `record` at the end; `reserve` must have made room for it.
    func append(_ record: UnsafePointer<PendingRecord>, seq: UInt64, timestamp: UInt64) -> Int {
        let n = RecordFormat.encode(record, seq: seq, timestamp: timestamp, into: base + count)
        count += n
        return n
    }

    /// Drops every byte from `newCount` on.
    func truncate(to newCount: Int) {
        precondition(newCount <= count)
        count = newCount
    }

    /// The bytes from `offset` for `length` bytes.
    func bytes(at offset: Int, length: Int) -> UnsafeRawBufferPointer {
        precondition(offset >= 0 && offset + length <= count)
        return UnsafeRawBufferPointer(start: base + offset, count: length)
    }
}
