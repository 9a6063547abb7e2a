import Foundation

/// A real `eventbus up` process (the default pipeline) on ipc endpoints in its own directory.
final class UpProcess: @unchecked Sendable {
    let directory: URL
    private(set) var process: Process?
    private var runs = 0

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-up-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    var dataDirectory: String { directory.appendingPathComponent("data").path }
    private var stderrFile: URL { directory.appendingPathComponent("up-\(runs).stderr") }

    /// Starts `eventbus up` on the data directory and waits until it logged `eventbus ready`.
    func start(seconds: Double = 30) throws {
        runs += 1
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BrokerProcess.binary)
        process.arguments = ["up", "--data-dir", dataDirectory, "--command", "ipc://\(directory.path)/command.sock",
                             "--stream", "ipc://\(directory.path)/stream.sock"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if log.contains("eventbus ready") { return }
            guard process.isRunning else { throw ProcessError("eventbus up exited: \(log)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw ProcessError("eventbus up not ready within \(seconds) s: \(log)")
    }

    /// What the current run wrote to stderr so far.
    var log: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    /// Kills `eventbus up` with SIGKILL (no clean stop of its plugins) and waits for it to be gone.
    func kill() {
        guard let process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The living processes started with a `--data-dir` under this data directory's
    /// `plugins/`, by plugin name (zombies, which run nothing, left out).
    func pluginProcesses() -> [String: [pid_t]] {
        let prefix = dataDirectory + "/plugins/"
        var found: [String: [pid_t]] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let name = Self.pluginName(pid, prefix: prefix), Self.isRunning(pid) else { continue }
            found[name, default: []].append(pid)
        }
        return found
    }

    /// The name after `prefix` in the `--data-dir` argument of process `pid`, if it has one.
    static func pluginName(_ pid: pid_t, prefix: String) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
        let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard let index = arguments.firstIndex(of: "--data-dir"), index + 1 < arguments.count,
              arguments[index + 1].hasPrefix(prefix) else { return nil }
        return String(arguments[index + 1].dropFirst(prefix.count))
    }

    /// Whether `pid` exists and is not a zombie.
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[close...].dropFirst(2).first != "Z"
    }

    deinit {
        kill()
        for pids in pluginProcesses().values { for pid in pids { Foundation.kill(pid, SIGKILL) } }
        try? FileManager.default.removeItem(at: directory)
    }
}
