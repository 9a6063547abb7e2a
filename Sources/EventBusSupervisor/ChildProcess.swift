import CSpawn
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with ``spawn(executable:arguments:environment:diesWithParent:)``
/// and reaped by its owner: no Foundation `Process`, which cannot run code
/// between fork and exec and reaps on its own.
///
/// The child's standard input is /dev/null, its standard output and error are
/// the parent's, it starts with every signal at its default action and none
/// blocked, and it inherits no other descriptor. With `diesWithParent` (Linux)
/// the kernel kills it with SIGKILL when the parent dies, so that a supervisor
/// killed with SIGKILL leaves no plugin running behind it.
///
/// That signal comes when the *thread* that spawned the child ends, not only
/// its process: spawn from a thread that lives as long as the child.
struct ChildProcess: Sendable {
    /// The child's process id; reserved for it until ``reap()``.
    let pid: pid_t

    /// Forks and executes `executable` with `arguments` and the variables of
    /// `environment`; a name without a slash is looked up in `PATH`.
    static func spawn(executable: String, arguments: [String], environment: [String: String],
                      diesWithParent: Bool = true) throws(SpawnError) -> ChildProcess {
        let path = resolve(executable, searchPath: environment["PATH"])
        // Everything the child needs exists before the fork: the child only reads it.
        let argv = ([path] + arguments).map { strdup($0) }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var error: Int32 = 0
        let pid = (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
            (envp + [nil]).withUnsafeBufferPointer { envpBuffer in
                eventbus_spawn(path, argvBuffer.baseAddress, envpBuffer.baseAddress, diesWithParent ? 1 : 0, &error)
            }
        }
        guard pid > 0 else { throw SpawnError(executable: executable, code: error) }
        return ChildProcess(pid: pid)
    }

    /// `name` itself when it holds a slash; else the first executable `DIR/name` of `searchPath`.
    static func resolve(_ name: String, searchPath: String?) -> String {
        guard !name.contains("/"), !name.isEmpty else { return name }
        for directory in (searchPath ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = directory + "/" + name
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return name
    }

    /// Blocks until the child has ended, without reaping it: its pid stays
    /// reserved (a zombie), so a signal sent to it before ``reap()`` cannot
    /// reach another process that took the number.
    func waitUntilEnded() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
    }

    /// Waits for the child to end if it has not, reaps it, and says how it ended.
    func reap() -> ChildExit {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED) != 0 {
            // ECHILD: reaped already, which only this type does once; nothing more is known.
            guard errno == EINTR else { return .exited(status: -1) }
        }
        let status = info._sifields._sigchld.si_status
        return info.si_code == Int32(CLD_EXITED) ? .exited(status: status) : .killed(signal: status)
    }
}
