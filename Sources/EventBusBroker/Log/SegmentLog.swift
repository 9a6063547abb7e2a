import EventBus
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Logging
import Synchronization

/// The broker's durable append-only log: numbered records in segment files.
///
/// Records get contiguous SEQs from 1, never reused. They live in
/// `<directory>/log/<first SEQ>.seg` files (format in docs/operations.md); the
/// last file is the active one, appended to. Appends are buffered in memory
/// until ``flush()`` or ``sync()`` (or until the buffer passes 1 MiB).
///
/// Not thread-safe: one thread (the broker's loop) owns it.
public final class SegmentLog {
    /// What opening the log found and repaired.
    public let recovery: LogRecovery
    /// The oldest retained SEQ; `headSeq + 1` when the log holds no record.
    public private(set) var firstSeq: UInt64
    /// The last appended SEQ; 0 when nothing was ever appended.
    public private(set) var headSeq: UInt64
    /// The last SEQ covered by a completed ``sync()``.
    public private(set) var durableSeq: UInt64

    /// A test hook: the next write to a segment writes at most this many bytes, then fails with `ENOSPC`.
    var failNextWriteAfterBytes: Int?
    /// A test hook: when not 0, the next ``sync()`` writes the buffer out, then fails with
    /// this `errno` (as `fdatasync` reports `EIO`) instead of syncing. Atomic, so that a test
    /// may set it while the broker's thread owns the log.
    let failNextSync = Atomic<Int32>(0)
    /// A test hook: when set, the next ticket ``prepareSync()`` takes waits for this
    /// semaphore before it syncs (so a test can make a later fsync end first).
    let holdNextSync = Mutex<DispatchSemaphore?>(nil)

    /// Bytes buffered before `append` writes them out by itself.
    static let flushThreshold = 1 << 20

    private let directory: String
    private let options: LogOptions
    private let logger: Logger
    private var segments: [Segment]
    private var activeFD: Int32
    /// Bytes of the active segment already in the file; the buffer holds the rest.
    private var activeWritten: Int
    private let buffer = WriteBuffer(capacity: 2 << 20)
    /// A reader kept between scans; taken out while one runs, so that a nested scan gets its own.
    private var spareReader: SegmentReader? = SegmentReader()
    /// Rolled segments written since the last `sync`, to fdatasync then.
    private var unsyncedPaths: [String] = []
    private var directoryNeedsSync = false
    /// One open descriptor of an older segment, for `read(seq:)`.
    private var cachedReader: (firstSeq: UInt64, fd: Int32)?
    /// Bytes read ahead for ``read(seq:)``.
    private let readAhead = ReadAhead()
    private var isClosed = false
    /// The failed sync after which the log takes no more writes (see ``sync()``).
    private var syncFailure: LogError?

    /// Opens the log in `directory`, creating `<directory>/log/` if missing.
    ///
    /// Every record of the last segment is checked (length, CRC32C, SEQ);
    /// older segments are indexed by their record headers (length, SEQ). The
    /// valid log ends at the first record that fails: the file is truncated
    /// there (and synced), any later segment is renamed to
    /// `<name>.discarded`, and the loss is reported in ``recovery`` and
    /// logged as a warning.
    ///
    /// - Parameters:
    ///   - directory: The data directory.
    ///   - options: Segment size and retention.
    ///   - logger: Where to report recovery.
    public init(directory: String, options: LogOptions = .init(), logger: Logger) throws(LogError) {
        self.directory = directory + "/log"
        self.options = options
        self.logger = logger
        try SystemFile.makeDirectories(self.directory)
        var repair = SegmentRecovery(directory: self.directory, logger: logger)
        try repair.run()
        let segments = repair.segments
        // Non-empty: run() leaves at least one segment.
        let active = segments.last!
        self.segments = segments
        self.activeFD = try SystemFile.open(active.path, O_RDWR)
        self.activeWritten = active.size
        self.headSeq = active.lastSeq
        self.firstSeq = segments[0].firstSeq
        self.durableSeq = active.lastSeq
        do {
            try SystemFile.dataSync(activeFD, path: active.path)
            try SystemFile.syncDirectory(self.directory)
        } catch {
            Glibc.close(activeFD)
            throw error
        }

        self.recovery = repair.report(records: active.lastSeq + 1 - segments[0].firstSeq)
        repair.logTruncation(headSeq: headSeq)
        logger.info(
            "log opened",
            metadata: [
                "log.directory": "\(self.directory)", "log.segments": "\(segments.count)",
                "log.first_seq": "\(firstSeq)", "log.head_seq": "\(headSeq)",
            ])
    }

    deinit {
        // Without close(), buffered records are lost, as in a crash.
        releaseDescriptors()
    }

    /// The bytes of every segment, including records not yet flushed.
    public var totalBytes: UInt64 {
        segments.reduce(0) { $0 + UInt64($1.size) }
    }

    /// The number of segment files.
    public var segmentCount: Int { segments.count }

    private var active: Segment {
        // The log always has at least the active segment.
        segments[segments.count - 1]
    }

    /// Appends a batch of records, atomically.
    ///
    /// The records get the SEQs `headSeq + 1` onward and all carry `timestamp`.
    /// They are buffered in memory (call ``flush()`` or ``sync()`` to write
    /// them); when the buffer passes 1 MiB, this writes it out itself. If that
    /// write fails, the file is cut back to its size before the write, the
    /// batch is dropped, `headSeq` is unchanged and the error is thrown; records
    /// of earlier batches stay buffered. A batch never spans two segments.
    ///
    /// - Parameters:
    ///   - batch: One or more records.
    ///   - timestamp: The append time, in milliseconds since 1970.
    /// - Returns: The SEQs given to the batch.
    @discardableResult
    public func append(_ batch: [PendingRecord], timestamp: UInt64) throws(LogError) -> ClosedRange<UInt64> {
        try checkWritable()
        guard !batch.isEmpty else { throw LogError(.invalidArgument, "an append needs at least one record") }
        // Records are read where they lie, through pointers: `batch[index]`, `for record in
        // batch` or a buffer's element would copy each (a retain and a release of each of its arrays).
        var total = 0
        try batch.withUnsafeBufferPointer { (records) throws(LogError) in
            // Not empty (checked above), so it has a base address.
            for index in records.indices { total += try RecordFormat.encodedSize(records.baseAddress! + index) }
        }
        if active.recordCount > 0 && active.size + total > options.segmentBytes {
            try roll()
        }
        let segment = active
        let bufferBefore = buffer.count
        let sizeBefore = segment.size
        let countBefore = segment.recordCount
        let newestBefore = segment.newestTimestamp
        let start = headSeq + 1
        buffer.reserve(total)
        var seq = start
        batch.withUnsafeBufferPointer { records in
            for index in records.indices {
                segment.offsets.append(segment.size)
                segment.size += buffer.append(records.baseAddress! + index, seq: seq, timestamp: timestamp)
                seq += 1
            }
        }
        segment.newestTimestamp = max(newestBefore, timestamp)
        if buffer.count >= Self.flushThreshold {
            do {
                try writeBuffer()
            } catch {
                buffer.truncate(to: bufferBefore)
                segment.size = sizeBefore
                segment.offsets.removeSubrange(countBefore...)
                segment.newestTimestamp = newestBefore
                throw error
            }
        }
        headSeq = seq - 1
        return start...headSeq
    }

    /// Writes every buffered record to the file (`write(2)`); after it, a
    /// crash of the process (SIGKILL) loses nothing appended.
    ///
    /// On failure the file is cut back to its size before the write and the
    /// records stay buffered, to be written by the next flush.
    public func flush() throws(LogError) {
        try checkWritable()
        try writeBuffer()
    }

    /// Drops every appended record not yet written to the file, as if it had
    /// never been appended: after a failed ``flush()``, so that a batch the
    /// broker refused with `busy` is not written by a later flush.
    ///
    /// - Returns: How many records were dropped; `headSeq` moves back by as many.
    @discardableResult
    public func discardUnwritten() -> Int {
        guard buffer.count > 0 else { return 0 }
        let segment = active
        var dropped = 0
        while let last = segment.offsets.last, last >= activeWritten {
            segment.offsets.removeLast()
            dropped += 1
        }
        segment.size = activeWritten
        buffer.truncate(to: 0)
        headSeq -= UInt64(dropped)
        return dropped
    }

    /// Flushes, then `fdatasync`s the segments written since the last sync
    /// (and the directory, after a segment was created or removed); then
    /// sets ``durableSeq`` to ``headSeq``: ``prepareSync()``, ``SyncTicket/perform()``
    /// and ``completeSync(_:failure:)`` in one call, on this thread.
    ///
    /// A failed sync is final: after it the kernel may have dropped the dirty
    /// pages and cleared the error, so a later sync could succeed without the
    /// data being on disk ("fsyncgate"). This one and every later ``append(_:timestamp:)``,
    /// ``flush()`` and ``sync()`` throw; reopening the log re-reads and re-syncs
    /// what is really in the files.
    public func sync() throws(LogError) {
        let ticket = try prepareSync()
        do {
            try ticket.perform()
        } catch {
            completeSync(ticket, failure: error)
            throw error
        }
        completeSync(ticket, failure: nil)
    }

    /// Writes the buffer out and names what a sync must flush to cover every
    /// record appended so far; the log goes on taking appends meanwhile. Hand
    /// the ticket to ``SyncTicket/perform()`` (on any thread), then its outcome
    /// to ``completeSync(_:failure:)``. Tickets complete in the order taken.
    public func prepareSync() throws(LogError) -> SyncTicket {
        try checkWritable()
        try writeBuffer()
        let fd = Glibc.dup(activeFD)
        guard fd >= 0 else { throw SystemFile.ioError("cannot duplicate the descriptor of", active.path) }
        let ticket = SyncTicket(
            head: headSeq, rolledPaths: unsyncedPaths, activeFD: fd, activePath: active.path,
            directory: directoryNeedsSync ? directory : nil,
            injectedErrno: failNextSync.exchange(0, ordering: .relaxed),
            hold: holdNextSync.withLock { hold in defer { hold = nil }; return hold })
        unsyncedPaths.removeAll()
        directoryNeedsSync = false
        return ticket
    }

    /// Records the outcome of a ticket's ``SyncTicket/perform()``: on success
    /// ``durableSeq`` rises to its head; a failure is final (see ``sync()``).
    public func completeSync(_ ticket: SyncTicket, failure: LogError?) {
        if let failure {
            syncFailure = syncFailure ?? failure
        } else if syncFailure == nil {
            durableSeq = max(durableSeq, ticket.head)
        }
    }

    /// The record with SEQ `seq`, or `nil` if it is not in `firstSeq...headSeq`.
    ///
    /// Also finds records still buffered. Throws ``LogError/Kind/corrupt``
    /// if the stored record fails its checks.
    public func read(seq: UInt64) throws(LogError) -> LogRecord? {
        try checkOpen()
        guard seq >= firstSeq, seq <= headSeq, let segment = segment(containing: seq) else { return nil }
        let index = Int(seq - segment.firstSeq)
        let range = segment.range(ofRecord: index)
        if segment === active && range.lowerBound >= activeWritten {
            let record = buffer.bytes(at: range.lowerBound - activeWritten, length: range.count)
            return RecordFormat.decode(record)
        }
        if let held = readAhead.bytes(of: segment, range) { return try checked(held, seq: seq, in: segment, at: range.lowerBound) }
        let fd = try descriptor(for: segment)
        // Read ahead what the file holds of this segment after the record (reads go in SEQ order).
        let written = segment === active ? activeWritten : segment.size
        let ahead = min(ReadAhead.capacity, written - range.lowerBound)
        if ahead >= range.count {
            let n = try SystemFile.preadAll(fd, readAhead.base, ahead, at: range.lowerBound, path: segment.path)
            readAhead.hold(segment, fileOffset: range.lowerBound, count: n)
            guard let held = readAhead.bytes(of: segment, range) else {
                throw LogError(.corrupt, "record \(seq) in \(segment.path) at offset \(range.lowerBound) is cut short")
            }
            return try checked(held, seq: seq, in: segment, at: range.lowerBound)
        }
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: range.count, alignment: 16)
        defer { raw.deallocate() }
        // range.count >= headerSize > 0, so the allocation has a base address.
        let n = try SystemFile.preadAll(fd, raw.baseAddress!, range.count, at: range.lowerBound, path: segment.path)
        guard n == range.count else {
            throw LogError(.corrupt, "record \(seq) in \(segment.path) at offset \(range.lowerBound) is cut short")
        }
        return try checked(UnsafeRawBufferPointer(raw), seq: seq, in: segment, at: range.lowerBound)
    }

    /// Decodes the record read back from `segment` at `offset`, after checking its length, SEQ and CRC.
    private func checked(_ record: UnsafeRawBufferPointer, seq: UInt64, in segment: Segment, at offset: Int) throws(LogError) -> LogRecord {
        if RecordFormat.bodyLength(record.baseAddress!) + RecordFormat.prefixSize != record.count {
            throw LogError(.corrupt, "record \(seq) in \(segment.path) at offset \(offset) is cut short")
        }
        if let problem = RecordFormat.check(record, expectedSeq: seq, verifyCRC: true) {
            throw LogError(.corrupt, "record \(seq) in \(segment.path) at offset \(offset): \(problem)")
        }
        return RecordFormat.decode(record)
    }

    /// Calls `body` with each record from `max(seq, firstSeq)` through
    /// ``headSeq`` in SEQ order, until it returns `false`.
    ///
    /// Reads files in large chunks and checks every record's CRC32C.
    /// `body` must not append to the log or enforce retention.
    public func scan(from seq: UInt64, _ body: (LogRecord) throws -> Bool) throws {
        try checkOpen()
        var next = max(seq, firstSeq)
        let head = headSeq
        let reader = spareReader ?? SegmentReader()
        spareReader = nil
        defer { spareReader = reader }
        while next <= head, let segment = segment(containing: next) {
            let index = Int(next - segment.firstSeq)
            let start = segment.offsets[index]
            let isActive = segment === active
            let fileEnd = isActive ? activeWritten : segment.size
            var keepGoing = true
            if start < fileEnd {
                // Its own descriptor: `body` may call read(seq:), which replaces the cached one.
                let fd = try SystemFile.open(segment.path, O_RDONLY)
                defer { Glibc.close(fd) }
                let outcome = try reader.walk(
                    fd: fd, path: segment.path, from: start, to: fileEnd, expectedSeq: next, verifyCRC: true
                ) { _, record in
                    next += 1
                    keepGoing = try body(RecordFormat.decode(record))
                    return keepGoing
                }
                if let failure = outcome.failure {
                    throw LogError(.corrupt, "\(segment.path): \(failure)")
                }
                if !keepGoing { return }
            }
            if isActive {
                while next <= head {
                    let range = segment.range(ofRecord: Int(next - segment.firstSeq))
                    let record = buffer.bytes(at: range.lowerBound - activeWritten, length: range.count)
                    next += 1
                    guard try body(RecordFormat.decode(record)) else { return }
                }
            }
        }
    }

    /// Removes whole segments, oldest first: those whose newest record is
    /// older than `retentionAge`, then more while the log is larger than
    /// `retentionBytes`.
    ///
    /// The segment being appended to is never removed for size. When every
    /// record of it is past `retentionAge`, the log first starts a fresh,
    /// empty segment (named after the next SEQ), so that it can go too; the
    /// numbering continues. ``firstSeq`` moves past the removed records.
    ///
    /// - Parameter now: The current time, in milliseconds since 1970.
    /// - Returns: The number of segments removed.
    @discardableResult
    public func enforceRetention(now: UInt64) throws(LogError) -> Int {
        try checkWritable()
        var removed = 0
        if let age = options.retentionAge {
            let ageMs = UInt64(max(0, age * 1000))
            let cutoff = now > ageMs ? now - ageMs : 0
            if active.recordCount > 0 && active.newestTimestamp < cutoff {
                try roll()
            }
            while segments.count > 1 && segments[0].newestTimestamp < cutoff {
                try removeOldest()
                removed += 1
            }
        }
        if let limit = options.retentionBytes {
            while segments.count > 1 && totalBytes > limit {
                try removeOldest()
                removed += 1
            }
        }
        return removed
    }

    /// Writes out buffered records and closes the files. Does not `fdatasync`;
    /// call ``sync()`` first for that. Errors are logged. After a failed
    /// ``sync()`` it writes nothing more: it only closes, as a crash would.
    public func close() {
        guard !isClosed else { return }
        do {
            if syncFailure == nil { try writeBuffer() }
        } catch {
            logger.error("log flush on close failed", metadata: ["error.type": "\(error)"])
        }
        releaseDescriptors()
        isClosed = true
    }

    // MARK: - Internals

    private func releaseDescriptors() {
        guard !isClosed else { return }
        Glibc.close(activeFD)
        if let cachedReader { Glibc.close(cachedReader.fd) }
        cachedReader = nil
        isClosed = true
    }

    private func checkOpen() throws(LogError) {
        if isClosed { throw LogError(.closed, "the log in \(directory) is closed") }
    }

    /// Throws when the log is closed or a sync failed: it then takes no more writes.
    private func checkWritable() throws(LogError) {
        try checkOpen()
        if let syncFailure {
            throw LogError(
                .io, "an earlier sync of the log failed (\(syncFailure.message)); reopen the log to recover it",
                errno: syncFailure.errno)
        }
    }

    /// Writes the buffer at the end of the active file; on failure cuts the file back.
    private func writeBuffer() throws(LogError) {
        guard buffer.count > 0 else { return }
        let failAfter = failNextWriteAfterBytes
        failNextWriteAfterBytes = nil
        do {
            try SystemFile.pwriteAll(
                activeFD, buffer.base, buffer.count, at: activeWritten, path: active.path, failAfter: failAfter)
        } catch {
            do {
                try SystemFile.truncate(activeFD, to: activeWritten, path: active.path)
            } catch let cut {
                logger.error(
                    "cannot cut the log back after a failed write",
                    metadata: ["log.segment": "\(active.fileName)", "error.type": "\(cut)"])
            }
            throw error
        }
        activeWritten += buffer.count
        buffer.truncate(to: 0)
    }

    /// Starts a new, empty active segment named after `headSeq + 1`.
    private func roll() throws(LogError) {
        try writeBuffer()
        let segment = Segment(firstSeq: headSeq + 1, directory: directory)
        let fd = try Self.create(segment)
        Glibc.close(activeFD)
        unsyncedPaths.append(active.path)
        segments.append(segment)
        activeFD = fd
        activeWritten = segment.size
        directoryNeedsSync = true
        logger.debug("log segment started", metadata: ["log.segment": "\(segment.fileName)"])
    }

    private func removeOldest() throws(LogError) {
        let segment = segments[0]
        if let cachedReader, cachedReader.firstSeq == segment.firstSeq {
            Glibc.close(cachedReader.fd)
            self.cachedReader = nil
        }
        if readAhead.segment === segment { readAhead.drop() }
        try SystemFile.unlink(segment.path)
        segments.removeFirst()
        unsyncedPaths.removeAll { $0 == segment.path }
        directoryNeedsSync = true
        firstSeq = segments[0].firstSeq
        logger.info(
            "log segment removed by retention",
            metadata: ["log.segment": "\(segment.fileName)", "log.first_seq": "\(firstSeq)"])
    }

    /// The segment holding `seq`, by binary search.
    private func segment(containing seq: UInt64) -> Segment? {
        var low = 0
        var high = segments.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if segments[mid].firstSeq <= seq { low = mid } else { high = mid - 1 }
        }
        let segment = segments[low]
        return seq >= segment.firstSeq && seq <= segment.lastSeq ? segment : nil
    }

    /// A descriptor to read `segment`: the active one's, or a cached one.
    private func descriptor(for segment: Segment) throws(LogError) -> Int32 {
        if segment === active { return activeFD }
        if let cachedReader {
            if cachedReader.firstSeq == segment.firstSeq { return cachedReader.fd }
            Glibc.close(cachedReader.fd)
            self.cachedReader = nil
        }
        let fd = try SystemFile.open(segment.path, O_RDONLY)
        cachedReader = (segment.firstSeq, fd)
        return fd
    }

    /// Creates (or empties) `segment`'s file with a header; returns it open for reading and writing.
    static func create(_ segment: Segment) throws(LogError) -> Int32 {
        let fd = try SystemFile.open(segment.path, O_RDWR | O_CREAT | O_TRUNC)
        let header = RecordFormat.fileHeader(firstSeq: segment.firstSeq)
        do {
            try SystemFile.pwriteAll(fd, header, at: 0, path: segment.path)
        } catch {
            Glibc.close(fd)
            _ = Glibc.unlink(segment.path)
            throw error
        }
        segment.size = RecordFormat.fileHeaderSize
        return fd
    }
}
