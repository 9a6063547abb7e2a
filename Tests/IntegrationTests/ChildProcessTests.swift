import Foundation
import Synchronization
import Testing

@testable import EventBusSupervisor

/// The supervisor's fork and exec: what a plugin process gets, how its end is
/// reported, and that it dies with the thread that started it.
@Suite struct ChildProcessTests {
    /// Reads `/proc/<pid>/<file>`.
    static func proc(_ pid: pid_t, _ file: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/\(file)")), as: UTF8.self)
    }

    /// The process state letter of `pid` (`Z` for a zombie), nil once it is gone.
    static func state(_ pid: pid_t) -> Character? {
        guard let stat = try? proc(pid, "stat"), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[close...].dropFirst(2).first
    }

    /// A field of `/proc/<pid>/status` as a number (`SigIgn`, `SigBlk` are hexadecimal).
    static func status(_ pid: pid_t, _ field: String) throws -> UInt64 {
        let line = try #require(try proc(pid, "status").split(separator: "\n").first { $0.hasPrefix(field + ":") })
        return try #require(UInt64(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces), radix: 16))
    }

    @Test func anExitStatusAndAKillingSignalAreReported() throws {
        let exits = try ChildProcess.spawn(executable: "/bin/sh", arguments: ["-c", "exit 3"], environment: [:])
        #expect(exits.reap() == .exited(status: 3))
        #expect(exits.reap().description != "", "a second reap does not hang")
        let killed = try ChildProcess.spawn(executable: "/bin/sh", arguments: ["-c", "kill -KILL $$"], environment: [:])
        let exit = killed.reap()
        #expect(exit == .killed(signal: SIGKILL))
        #expect(exit.description == "killed by signal 9")
        #expect(ChildExit.exited(status: 3).description == "exited with status 3")
    }

    @Test func anExecutableThatCannotRunThrowsWithTheReason() throws {
        let error = #expect(throws: SpawnError.self) {
            try ChildProcess.spawn(executable: "/nonexistent/plugin", arguments: [], environment: [:])
        }
        #expect(error?.code == ENOENT)
        #expect(error?.description.contains("/nonexistent/plugin") == true)
    }

    @Test func aBareNameIsFoundInPath() throws {
        let child = try ChildProcess.spawn(executable: "sh", arguments: ["-c", "exit 4"], environment: ["PATH": "/nonexistent:/bin:/usr/bin"])
        #expect(child.reap() == .exited(status: 4))
    }

    /// Arguments and environment as given, stdin from /dev/null, no other inherited
    /// descriptor, every signal at its default action and none blocked, although
    /// the parent has a descriptor without O_CLOEXEC, ignores SIGUSR2 and blocks it.
    @Test func theChildGetsItsArgumentsAndEnvironmentAndNothingElseOfTheParent() throws {
        let leaked = open("/dev/null", O_RDONLY)  // deliberately without O_CLOEXEC
        try #require(leaked >= 0)
        defer { close(leaked) }
        let previousAction = signal(SIGUSR2, SIG_IGN)
        defer { signal(SIGUSR2, previousAction) }
        var blocked = sigset_t(), previousMask = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGUSR2)
        pthread_sigmask(SIG_BLOCK, &blocked, &previousMask)
        defer { pthread_sigmask(SIG_SETMASK, &previousMask, nil) }

        let child = try ChildProcess.spawn(executable: "/bin/sleep", arguments: ["30"],
                                           environment: ["EVENTBUS_TEST": "a value with spaces", "PATH": "/bin"])
        defer {
            kill(child.pid, SIGKILL)
            _ = child.reap()
        }
        #expect(try Self.proc(child.pid, "cmdline") == "/bin/sleep\u{0}30\u{0}")
        let environment = try Self.proc(child.pid, "environ").split(separator: "\u{0}").map(String.init)
        #expect(environment.sorted() == ["EVENTBUS_TEST=a value with spaces", "PATH=/bin"])
        // sleep's own start-up may hold a file for a moment (the locale archive): a leaked
        // descriptor is one still open once that is over, so the list is looked at until
        // it is [0, 1, 2] or two seconds passed.
        var descriptors: [Int] = []
        let settled = Date().addingTimeInterval(2)
        repeat {
            descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(child.pid)/fd").compactMap { Int($0) }.sorted()
            if descriptors == [0, 1, 2] { break }
            usleep(10_000)  // a poll interval
        } while Date() < settled
        #expect(descriptors == [0, 1, 2], "descriptors of the parent leaked into the child")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child.pid)/fd/0") == "/dev/null")
        let ignored = try Self.status(child.pid, "SigIgn")
        #expect(ignored == 0, "ignored signals are reset to their default: SigIgn \(String(ignored, radix: 16))")
        #expect(try Self.status(child.pid, "SigBlk") == 0, "no signal is blocked")
        kill(child.pid, SIGTERM)
        #expect(child.reap() == .killed(signal: SIGTERM))
    }

    /// `PR_SET_PDEATHSIG`: the child is killed when the thread that spawned it ends
    /// (so too when the supervisor process dies, whatever kills it).
    @Test func theChildIsKilledWhenItsSpawningThreadEnds() throws {
        let spawned = DispatchSemaphore(value: 0)
        let result = Mutex<Result<ChildProcess, SpawnError>?>(nil)
        let thread = Thread {
            let spawn = Result { () throws(SpawnError) in try ChildProcess.spawn(executable: "/bin/sleep", arguments: ["60"], environment: [:]) }
            result.withLock { $0 = spawn }
            spawned.signal()
        }
        thread.start()
        spawned.wait()
        let child = try #require(try result.withLock { $0 }?.get())
        // The thread has ended or is ending; the child must follow within a bounded time.
        let deadline = Date().addingTimeInterval(10)
        while Self.state(child.pid) != "Z" && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }  // a poll interval
        let ended = Self.state(child.pid) == "Z"
        if !ended { kill(child.pid, SIGKILL) }
        #expect(ended, "the child outlived the thread that spawned it")
        #expect(child.reap() == .killed(signal: SIGKILL))
    }
}
