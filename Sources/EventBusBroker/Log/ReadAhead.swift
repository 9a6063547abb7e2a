/// Bytes of one segment file read ahead of a reader that goes in SEQ order,
/// such as a consumer catching up from the log: one `pread` of
/// ``capacity`` bytes serves the records after the one asked for.
///
/// Holds only bytes already written to the file, which never change; the log
/// drops it when it removes the segment. Owned by one ``SegmentLog``.
final class ReadAhead {
    static let capacity = 256 * 1024
    let base = UnsafeMutableRawPointer.allocate(byteCount: ReadAhead.capacity, alignment: 16)
    /// The segment whose bytes are held, and their place in its file.
    private(set) var segment: Segment?
    private(set) var fileOffset = 0
    private(set) var count = 0

    deinit { base.deallocate() }

    /// The bytes of `range` of `segment`'s file, if held.
    func bytes(of segment: Segment, _ range: Range<Int>) -> UnsafeRawBufferPointer? {
        guard self.segment === segment, range.lowerBound >= fileOffset, range.upperBound <= fileOffset + count else { return nil }
        return UnsafeRawBufferPointer(start: base + (range.lowerBound - fileOffset), count: range.count)
    }

    /// Records that `count` bytes from `fileOffset` of `segment` now fill the buffer.
    func hold(_ segment: Segment, fileOffset: Int, count: Int) {
        self.segment = segment
        self.fileOffset = fileOffset
        self.count = count
    }

    /// Forgets what is held.
    func drop() {
        segment = nil
        count = 0
    }
}
