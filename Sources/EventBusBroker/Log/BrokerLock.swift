#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock on a data directory (`flock` on `<directory>/broker.lock`), held by the
/// broker while it serves and by `eventbus recover` while it repairs: two of them never use
/// one log at once. The kernel drops the lock when its holder dies, even by SIGKILL.
public final class BrokerLock {
    private var fd: Int32
    /// The lock file.
    public let path: String

    /// Takes the lock, creating the directory and the file if missing.
    ///
    /// - Throws: ``LogError/Kind/io``, naming the directory, when another process holds it.
    public init(directory: String) throws(LogError) {
        try SystemFile.makeDirectories(directory)
        path = directory + "/broker.lock"
        fd = try SystemFile.open(path, O_RDWR | O_CREAT, mode: 0o600)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            Glibc.close(fd)
            if code == EWOULDBLOCK {
                throw LogError(.io, "\(directory) is in use by another broker or `eventbus recover` (it holds \(path))", errno: code)
            }
            throw SystemFile.ioError("cannot lock", path, code)
        }
    }

    deinit { release() }

    /// Gives the lock up; safe to call more than once.
    public func release() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }
}
