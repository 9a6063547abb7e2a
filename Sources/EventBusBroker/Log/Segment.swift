/// What the log knows about one segment file: its records' offsets and size.
final class Segment {
    /// The SEQ of the segment's first record (also when it has none yet).
    let firstSeq: UInt64
    /// The file's name, `<first SEQ as 20 digits>.seg`.
    let fileName: String
    /// The file's full path.
    let path: String
    // Unchecked for exclusivity as ``BrokerCore``'s state is (one thread, nothing lent): the
    // log's append updates these per record.
    /// The byte offset of each record, in SEQ order.
    @exclusivity(unchecked) var offsets: [Int] = []
    /// The logical size: bytes in the file plus, for the active segment, bytes still buffered.
    @exclusivity(unchecked) var size: Int
    /// The largest timestamp of its records; 0 when it has none.
    @exclusivity(unchecked) var newestTimestamp: UInt64 = 0

    init(firstSeq: UInt64, directory: String) {
        self.firstSeq = firstSeq
        self.fileName = RecordFormat.fileName(firstSeq: firstSeq)
        self.path = directory + "/" + fileName
        self.size = RecordFormat.fileHeaderSize
    }

    var recordCount: Int { offsets.count }

    /// The SEQ of the last record, or `firstSeq - 1` when empty.
    var lastSeq: UInt64 { firstSeq + UInt64(offsets.count) - 1 }

    /// The byte range of record `index`.
    func range(ofRecord index: Int) -> Range<Int> {
        let start = offsets[index]
        let end = index + 1 < offsets.count ? offsets[index + 1] : size
        return start..<end
    }
}
