#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// What one sync of the log must make durable, taken on the loop's thread by
/// ``SegmentLog/prepareSync()`` and carried out on any thread by ``perform()``:
/// only system calls on descriptors and paths of its own, nothing of the log's
/// state, so the loop goes on appending while the disk flushes.
///
/// Every record up to ``head`` was written to its file before the ticket was
/// taken, so one `fdatasync` of each file covers it.
public struct SyncTicket: Sendable {
    /// The last SEQ the sync covers.
    public let head: UInt64
    /// Segments rolled since the last sync; one removed meanwhile by retention is skipped.
    let rolledPaths: [String]
    /// A duplicate of the active segment's descriptor, closed by ``perform()``: the
    /// log may roll and close its own while the sync runs.
    let activeFD: Int32
    let activePath: String
    /// The log's directory, when a segment was created or removed since the last sync.
    let directory: String?
    /// The test hook ``SegmentLog/failNextSync``: when not 0, fail with this `errno` instead of syncing.
    let injectedErrno: Int32
    /// The test hook ``SegmentLog/holdNextSync``: when set, waited for before syncing.
    let hold: DispatchSemaphore?

    /// `fdatasync`s what the ticket names, then closes its descriptor. Call once.
    public func perform() throws(LogError) {
        defer { Glibc.close(activeFD) }
        hold?.wait()
        if injectedErrno != 0 {
            throw LogError(.io, "cannot fdatasync \(activePath): injected failure (errno \(injectedErrno))", errno: injectedErrno)
        }
        for path in rolledPaths {
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            if fd < 0 {
                if errno == ENOENT { continue }  // removed by retention meanwhile
                throw SystemFile.ioError("cannot open", path)
            }
            defer { Glibc.close(fd) }
            try SystemFile.dataSync(fd, path: path)
        }
        try SystemFile.dataSync(activeFD, path: activePath)
        if let directory { try SystemFile.syncDirectory(directory) }
    }
}
