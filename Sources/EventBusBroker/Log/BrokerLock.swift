import EventBus
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock on a data directory (a ``FileLock`` on `<directory>/broker.lock`),
/// held by the broker while it serves and by `eventbus recover` while it repairs: two of
/// them never use one log at once.
public final class BrokerLock: Sendable {
    private let lock: FileLock

    /// Takes the lock, creating the directory and the file if missing.
    ///
    /// - Throws: ``LogError/Kind/io``, naming the directory, when another process holds it.
    public init(directory: String) throws(LogError) {
        try SystemFile.makeDirectories(directory)
        let path = directory + "/broker.lock"
        do {
            lock = try FileLock(path: path)
        } catch {
            switch error {
            case .held:
                throw LogError(.locked, "\(directory) is in use by another broker or `eventbus recover` (it holds \(path))", errno: EWOULDBLOCK)
            case .system(let failure):
                throw LogError(.io, failure.description, errno: failure.code)
            }
        }
    }

    /// Gives the lock up; safe to call more than once.
    public func release() { lock.release() }
}
