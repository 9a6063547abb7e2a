#if canImport(Glibc)
import Glibc
#endif

/// A child process could not be started: the fork failed, or the exec did.
struct SpawnError: Error, Sendable, CustomStringConvertible {
    /// The executable that was to run.
    let executable: String
    /// The errno of the call that failed.
    let code: Int32

    var description: String { "cannot start \(executable): \(String(cString: strerror(code)))" }
}
