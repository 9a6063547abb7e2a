#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// What the bus keeps on disk is for its own user only (docs/operations.md, "Permissions"):
/// folders 0700 and files 0600 whatever the umask, and exclusive locks on a directory.
/// One implementation for the broker's data directory and the plugins' state folders.
package enum PrivateFiles {
    /// A system call that failed: what was done, on which path, and `errno`.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What was being done, such as `cannot create directory`.
        package let what: String
        /// The path it was done to.
        package let path: String
        /// The `errno` of the call.
        package let code: Int32

        package var description: String { "\(what) \(path): \(String(cString: strerror(code)))" }
    }

    /// Creates `path` and any missing parent with mode 0700, whatever the umask (mkdir applies
    /// it, which could only narrow the mode: it is set exactly after); folders that exist
    /// already are left as they are.
    package static func makeDirectories(_ path: String) throws(Failure) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, 0o700) == 0 {
                guard chmod(prefix, 0o700) == 0 else { throw Failure(what: "cannot chmod to 0700", path: prefix, code: errno) }
            } else if errno != EEXIST {
                throw Failure(what: "cannot create directory", path: prefix, code: errno)
            }
        }
    }
}

/// An exclusive `flock` on a file, held until ``release()`` or the end of the object; the
/// kernel drops it when its process dies, even by SIGKILL, so no stale lock survives a crash.
///
/// The file is created 0600 whatever the umask and opened `O_CLOEXEC`, so that no process
/// the holder starts keeps it.
package final class FileLock: Sendable {
    /// Why a lock was not taken.
    package enum Failure: Error, Sendable, Equatable {
        /// Another process holds it.
        case held
        /// A system call failed.
        case system(PrivateFiles.Failure)
    }

    /// The lock file.
    package let path: String
    private let descriptor: Atomic<Int32>

    /// Takes the lock on `path`, creating the file if missing; never waits.
    package init(path: String) throws(Failure) {
        self.path = path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(PrivateFiles.Failure(what: "cannot open", path: path, code: errno)) }
        guard fchmod(fd, 0o600) == 0 else {
            let code = errno
            close(fd)
            throw .system(PrivateFiles.Failure(what: "cannot chmod to 0600", path: path, code: code))
        }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(fd)
            if code == EWOULDBLOCK { throw .held }
            throw .system(PrivateFiles.Failure(what: "cannot lock", path: path, code: code))
        }
        descriptor = Atomic(fd)
    }

    deinit { release() }

    /// Gives the lock up; safe to call more than once, from any thread.
    package func release() {
        let fd = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        if fd >= 0 { close(fd) }
    }
}
