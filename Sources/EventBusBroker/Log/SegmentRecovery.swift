#if canImport(Glibc)
import Glibc
#endif
import Logging

/// The work of opening a ``SegmentLog``: checks its segments in order, cuts the
/// log at the first record that fails, and sets aside the segments after it.
///
/// Every record of the last segment is checked (length, CRC32C, SEQ); older
/// segments are indexed by their record headers (length, SEQ). What it found
/// becomes the log's ``LogRecovery``.
struct SegmentRecovery {
    /// The `log/` directory.
    let directory: String
    let logger: Logger
    /// The segments kept, in SEQ order; never empty once ``run()`` returned.
    private(set) var segments: [Segment] = []
    /// Bytes cut off a torn or corrupt tail, segments set aside included.
    private(set) var truncatedBytes: UInt64 = 0
    /// The file name of the segment that was cut.
    private(set) var truncatedSegment: String?
    /// Why the valid log ended early; nil when every segment was whole.
    private(set) var reason: String?
    /// Segments after a break in the log, to be renamed `<name>.discarded`.
    private var discarded: [String] = []
    private let reader = SegmentReader()

    init(directory: String, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    /// Lists, checks and repairs the segments, sets aside those after a break,
    /// and starts an empty log if none is left.
    mutating func run() throws(LogError) {
        let firstSeqs = try listSegments()
        for (index, first) in firstSeqs.enumerated() {
            try recover(Segment(firstSeq: first, directory: directory), isLast: index == firstSeqs.count - 1)
        }
        try setAsideDiscarded()
        if segments.isEmpty {
            let segment = Segment(firstSeq: 1, directory: directory)
            try Self.rewrite(segment)
            segments.append(segment)
        }
    }

    /// What was found, for a log that now holds `records` records.
    func report(records: UInt64) -> LogRecovery {
        LogRecovery(
            segments: segments.count, records: records, truncatedBytes: truncatedBytes,
            truncatedSegment: truncatedSegment, reason: reason)
    }

    /// Logs a warning if the log was cut; `headSeq` is where it now ends.
    func logTruncation(headSeq: UInt64) {
        guard let reason else { return }
        logger.warning(
            "log tail truncated on open",
            metadata: [
                "log.segment": "\(truncatedSegment ?? "-")",
                "log.truncated_bytes": "\(truncatedBytes)",
                "log.reason": "\(reason)",
                "bus.seq": "\(headSeq)",
            ])
    }

    // MARK: - One segment

    /// The first SEQs of the segment files, in order.
    private func listSegments() throws(LogError) -> [UInt64] {
        try SystemFile.list(directory).compactMap(RecordFormat.firstSeq(fileName:)).sorted()
    }

    /// Keeps `segment` (cut at its first bad record), or marks it to be set
    /// aside when it comes after a break.
    private mutating func recover(_ segment: Segment, isLast: Bool) throws(LogError) {
        if reason != nil {
            discarded.append(segment.path)
            return
        }
        if let previous = segments.last, previous.lastSeq + 1 != segment.firstSeq {
            reason = "segment \(segment.fileName) starts at SEQ \(segment.firstSeq), after SEQ \(previous.lastSeq)"
            discarded.append(segment.path)
            return
        }
        let fd = try SystemFile.open(segment.path, O_RDONLY)
        defer { Glibc.close(fd) }
        let fileSize = try SystemFile.size(fd, path: segment.path)
        if let headerProblem = try Self.checkHeader(fd, of: segment) {
            try headerFailed(segment, headerProblem, fileSize: fileSize)
            return
        }
        let outcome = try walkRecords(fd, of: segment, fileSize: fileSize, verifyCRC: isLast)
        // What a crash left in the page cache counts as durable from now on: make it so.
        try SystemFile.dataSync(fd, path: segment.path)
        segment.size = outcome.end
        segments.append(segment)
        if let failure = outcome.failure {
            try truncate(segment, failure, fileSize: fileSize)
        }
    }

    /// What is wrong with `segment`'s file header, or nil.
    private static func checkHeader(_ fd: Int32, of segment: Segment) throws(LogError) -> String? {
        let header = UnsafeMutableRawBufferPointer.allocate(byteCount: RecordFormat.fileHeaderSize, alignment: 8)
        defer { header.deallocate() }
        // fileHeaderSize > 0 bytes were allocated, so there is a base address.
        let headerRead = try SystemFile.preadAll(fd, header.baseAddress!, header.count, at: 0, path: segment.path)
        return RecordFormat.checkFileHeader(
            UnsafeRawBufferPointer(rebasing: header[0..<headerRead]), firstSeq: segment.firstSeq)
    }

    /// The log ends before `segment`, whose header is bad: the first segment is
    /// kept as an empty one with a fresh header, a later one is set aside.
    private mutating func headerFailed(_ segment: Segment, _ problem: String, fileSize: Int) throws(LogError) {
        reason = "\(segment.fileName): \(problem)"
        guard segments.isEmpty else {
            discarded.append(segment.path)
            return
        }
        truncatedBytes += UInt64(fileSize)
        truncatedSegment = segment.fileName
        try Self.rewrite(segment)
        segments.append(segment)
    }

    /// Indexes `segment`'s records (offsets, newest timestamp) up to the first that fails.
    private func walkRecords(
        _ fd: Int32, of segment: Segment, fileSize: Int, verifyCRC: Bool
    ) throws(LogError) -> SegmentReader.Outcome {
        var offsets: [Int] = []
        var newest: UInt64 = 0
        let outcome: SegmentReader.Outcome
        do {
            outcome = try reader.walk(
                fd: fd, path: segment.path, from: RecordFormat.fileHeaderSize, to: fileSize,
                expectedSeq: segment.firstSeq, verifyCRC: verifyCRC, firstChunk: .max
            ) { offset, record in
                offsets.append(offset)
                // Callers of body always get a non-empty record.
                newest = max(newest, RecordFormat.timestamp(record.baseAddress!))
                return true
            }
        } catch let error as LogError {
            throw error
        } catch {
            throw LogError(.io, "cannot read \(segment.path): \(error)")
        }
        segment.offsets = offsets
        segment.newestTimestamp = newest
        return outcome
    }

    /// Cuts `segment`'s file after its last good record (`segment.size`) and syncs it.
    private mutating func truncate(_ segment: Segment, _ failure: String, fileSize: Int) throws(LogError) {
        reason = "\(segment.fileName): \(failure)"
        truncatedBytes += UInt64(fileSize - segment.size)
        truncatedSegment = segment.fileName
        let writer = try SystemFile.open(segment.path, O_WRONLY)
        defer { Glibc.close(writer) }
        try SystemFile.truncate(writer, to: segment.size, path: segment.path)
        try SystemFile.fullSync(writer, path: segment.path)
    }

    // MARK: - After the walk

    /// Renames each segment after the break to `<name>.discarded`, counting its bytes as cut.
    private mutating func setAsideDiscarded() throws(LogError) {
        for path in discarded {
            let fd = try SystemFile.open(path, O_RDONLY)
            truncatedBytes += UInt64((try? SystemFile.size(fd, path: path)) ?? 0)
            Glibc.close(fd)
            try SystemFile.rename(path, path + ".discarded")
            logger.error("log segment set aside after a break in the log", metadata: ["log.segment": "\(path)"])
        }
    }

    /// Resets `segment`'s file to an empty segment and syncs it.
    private static func rewrite(_ segment: Segment) throws(LogError) {
        let fd = try SegmentLog.create(segment)
        defer { Glibc.close(fd) }
        try SystemFile.fullSync(fd, path: segment.path)
    }
}
