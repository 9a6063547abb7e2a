import EventBus
/// Reads the records of a segment file sequentially, in large chunks.
///
/// One `pread` fetches many records; a record larger than the chunk is read
/// whole by growing the buffer.
final class SegmentReader {
    /// How a walk over a file ended.
    struct Outcome {
        /// The offset just past the last valid record visited.
        var end: Int
        /// Why the walk stopped before `limit`, if a record failed a check.
        var failure: String?
    }

    private var buffer: UnsafeMutableRawPointer
    private var capacity: Int

    init(chunkSize: Int = 4 << 20) {
        capacity = chunkSize
        buffer = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// Visits the records of `fd` from `start` up to `limit`, checking each.
    ///
    /// - Parameters:
    ///   - expectedSeq: The SEQ the record at `start` must have; each next one is one more.
    ///   - verifyCRC: Whether to verify every record's CRC32C (lengths and SEQs are always checked).
    ///   - firstChunk: The size of the first read; later reads double up to the buffer's capacity.
    ///   - body: Called with each valid record's offset and bytes; return `false` to stop.
    /// - Returns: Where the walk ended and, if a record was invalid, why.
    func walk(
        fd: Int32, path: String, from start: Int, to limit: Int, expectedSeq: UInt64, verifyCRC: Bool,
        firstChunk: Int = 64 << 10,
        _ body: (Int, UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Outcome {
        // Reads start small (a reader often wants only a few records) and double up to the capacity.
        var chunk = min(firstChunk, capacity)
        var offset = start
        var seq = expectedSeq
        var windowStart = start
        var windowLength = 0

        // Makes [offset, offset + need) available in the buffer; false if the file ends first.
        func ensure(_ need: Int) throws(LogError) -> Bool {
            if offset + need <= windowStart + windowLength { return true }
            if offset + need > limit { return false }
            if need > capacity {
                buffer.deallocate()
                capacity = need
                buffer = .allocate(byteCount: capacity, alignment: 16)
            }
            let wanted = min(max(chunk, need), limit - offset)
            chunk = min(chunk * 2, capacity)
            windowStart = offset
            windowLength = try SystemFile.preadAll(fd, buffer, wanted, at: offset, path: path)
            return offset + need <= windowStart + windowLength
        }

        while offset < limit {
            guard try ensure(RecordFormat.prefixSize) else {
                return Outcome(end: offset, failure: "a record header runs past the end of the file at offset \(offset)")
            }
            let length = RecordFormat.bodyLength(buffer + (offset - windowStart))
            if length < RecordFormat.fixedBodySize || length > RecordFormat.maxBodySize {
                return Outcome(end: offset, failure: "invalid record length \(length) at offset \(offset)")
            }
            let total = RecordFormat.prefixSize + length
            guard try ensure(total) else {
                return Outcome(end: offset, failure: "a record of \(total) bytes at offset \(offset) runs past the end of the file")
            }
            let record = UnsafeRawBufferPointer(start: buffer + (offset - windowStart), count: total)
            if let problem = RecordFormat.check(record, expectedSeq: seq, verifyCRC: verifyCRC) {
                return Outcome(end: offset, failure: "\(problem) at offset \(offset)")
            }
            guard try body(offset, record) else {
                return Outcome(end: offset + total, failure: nil)
            }
            offset += total
            seq += 1
        }
        return Outcome(end: offset, failure: nil)
    }
}
