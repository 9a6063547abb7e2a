import Foundation
import Logging

/// A real `eventbus up` process (the default pipeline, or what `arguments` say) on ipc
/// endpoints in its own temporary directory. SIGKILLed, with the plugins it started,
/// and its directory removed when it goes (unless made to keep it).
public final class UpProcess: @unchecked Sendable {
    public let directory: URL
    public let extraArguments: [String]
    /// Whether the directory goes with this value (the chaos campaign keeps a failed round's).
    public var removesDirectory = true
    /// Variables added to its environment.
    public let environment: [String: String]
    /// The current (or last) run.
    public private(set) var process: RunningProcess?
    private var runs = 0
    private let logger = Logger(label: "eventbus.testing.up")

    public init(arguments: [String] = [], environment: [String: String] = [:]) throws {
        directory = try TemporaryDirectory.create("eventbus-up")
        extraArguments = arguments
        self.environment = environment
    }

    /// `eventbus up` in `directory` (created if missing), which is kept when this value goes
    /// unless ``removesDirectory`` is set.
    public init(directory: URL, arguments: [String] = [], environment: [String: String] = [:]) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        extraArguments = arguments
        self.environment = environment
        removesDirectory = false
    }

    public var dataDirectory: String { directory.appendingPathComponent("data").path }
    public var commandEndpoint: String { EphemeralEndpoint.ipc(in: directory, "command") }
    public var streamEndpoint: String { EphemeralEndpoint.ipc(in: directory, "stream") }
    private var stderrFile: URL { directory.appendingPathComponent("up-\(runs).stderr") }

    /// Starts `eventbus up` on the data directory and waits until it logged `eventbus ready`.
    public func start(within timeout: Duration = .seconds(30)) async throws {
        runs += 1
        let process = try RunningProcess(
            BuildFolder.eventbus,
            ["up", "--data-dir", dataDirectory, "--command", commandEndpoint, "--stream", streamEndpoint] + extraArguments,
            environment: environment, standardError: .file(stderrFile.path))
        self.process = process
        logger.debug("eventbus up started", metadata: ["pid": "\(process.processIdentifier)"])
        var patience = Patience(timeout)
        repeat {
            if log.contains("eventbus ready") { return }
            guard process.isRunning else { throw ProcessError("eventbus up exited: \(log)") }
            try await Task.sleep(for: .milliseconds(50))  // a poll interval
        } while patience.allowsAnotherLook()
        if log.contains("eventbus ready") { return }
        throw ProcessError("eventbus up not ready within \(timeout): \(log)")
    }

    /// What the current run wrote to stderr so far.
    public var log: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    /// Kills `eventbus up` with SIGKILL (no clean stop of its plugins) and waits for it to be gone.
    public func kill() async throws {
        guard let process else { return }
        try await process.kill()
    }

    /// Stops `eventbus up` with SIGTERM and returns its exit status (-1 if it never started).
    @discardableResult
    public func terminate() async throws -> Int32 {
        guard let process else { return -1 }
        return try await process.terminate()
    }

    /// Runs `body`, then stops `eventbus up` (``terminate()``) whether `body` threw or not.
    public func terminateAfter<T>(_ body: () async throws -> T) async throws -> T {
        try await awaitingCleanup(body) { _ = try await self.terminate() }
    }

    /// The living processes started with a `--data-dir` under this data directory's
    /// `plugins/`, by plugin name (zombies, which run nothing, left out).
    public func pluginProcesses() -> [String: [pid_t]] {
        let prefix = dataDirectory + "/plugins/"
        var found: [String: [pid_t]] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let name = Self.pluginName(pid, prefix: prefix), Self.isRunning(pid) else { continue }
            found[name, default: []].append(pid)
        }
        return found
    }

    /// The name after `prefix` in the `--data-dir` argument of process `pid`, if it has one.
    public static func pluginName(_ pid: pid_t, prefix: String) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
        let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard let index = arguments.firstIndex(of: "--data-dir"), index + 1 < arguments.count,
              arguments[index + 1].hasPrefix(prefix) else { return nil }
        return String(arguments[index + 1].dropFirst(prefix.count))
    }

    /// Whether `pid` exists and is not a zombie.
    public static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[close...].dropFirst(2).first != "Z"
    }

    deinit {
        process?.signal(SIGKILL)
        for pids in pluginProcesses().values { for pid in pids { Foundation.kill(pid, SIGKILL) } }
        if removesDirectory { try? FileManager.default.removeItem(at: directory) }
    }
}
