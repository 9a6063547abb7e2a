#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock on a plugin's data directory, held while the process lives,
/// so that a second copy of the plugin on the same directory refuses to start
/// instead of sharing its consumer and state with the first.
///
/// The lock is `flock(LOCK_EX | LOCK_NB)` on `<directory>/lock` (created 0600),
/// opened `O_CLOEXEC` so that no process the plugin starts keeps it. The kernel
/// lets go of it when the process ends, however it ends: no stale lock survives
/// a crash or a SIGKILL.
public final class DataDirectoryLock: Sendable {
    /// The lock file, `<directory>/lock`.
    public let path: String
    private let descriptor: Int32

    /// Creates `directory` (0700) if missing and takes its lock.
    ///
    /// - Throws: ``PluginError`` naming the directory when another process holds
    ///   the lock ("another copy of plugin NAME is running with data dir DIR"),
    ///   or when the directory or the lock file cannot be made.
    public init(directory: String, plugin: String) throws(PluginError) {
        try PrivateDirectory.create(directory)
        path = directory + "/lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PluginError("cannot open \(path): \(String(cString: strerror(errno)))") }
        guard fchmod(fd, 0o600) == 0 else {
            let code = errno
            close(fd)
            throw PluginError("cannot chmod \(path) to 0600: \(String(cString: strerror(code)))")
        }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(fd)
            if code == EWOULDBLOCK {
                throw PluginError("another copy of plugin \(plugin) is running with data dir \(directory) "
                    + "(it holds \(path)); stop it first, or give this copy a --data-dir of its own")
            }
            throw PluginError("cannot lock \(path): \(String(cString: strerror(code)))")
        }
        descriptor = fd
    }

    deinit { close(descriptor) }
}
