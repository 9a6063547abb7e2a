import EventBusSupervisor
import EventBusTesting
import Foundation
import Testing

/// A plugin lives no longer than its supervisor, and one copy of a plugin runs per data directory.
@Suite(.serialized) struct PluginLifetimeTests {
    /// SIGKILL of `eventbus up` takes its plugins with it (the kernel's parent-death
    /// signal); started again on the same data directory, each plugin runs once.
    @Test func pluginsDieWithAKilledSupervisorAndRunOnceAfterARestart() async throws {
        let up = try UpProcess()
        try await up.start()
        let before = up.pluginProcesses()
        #expect(before.mapValues(\.count) == Dictionary(uniqueKeysWithValues: Pipeline.defaultNames.map { ($0, 1) }), "\(before)")

        try await up.kill()
        let old = before.values.flatMap { $0 }
        let prefix = up.dataDirectory + "/plugins/"
        func survivors() -> [pid_t] { old.filter { UpProcess.isRunning($0) && UpProcess.pluginName($0, prefix: prefix) != nil } }
        let deadline = ContinuousClock.now + .seconds(10)
        while !survivors().isEmpty && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }  // a poll interval
        #expect(survivors().isEmpty, "plugins outlived the killed supervisor: \(survivors())")

        try await up.start()
        let after = up.pluginProcesses()
        #expect(after.mapValues(\.count) == Dictionary(uniqueKeysWithValues: Pipeline.defaultNames.map { ($0, 1) }), "\(after)")
        #expect(Set(after.values.flatMap { $0 }).isDisjoint(with: old))
    }

    /// Whether process `pid` holds a flock on the file with inode `inode` (from /proc/locks).
    static func holdsFlock(_ pid: pid_t, inode: UInt64) -> Bool {
        let locks = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
        return locks.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 5 && fields[1] == "FLOCK" && fields[4] == "\(pid)" && fields[5].hasSuffix(":\(inode)")
        }
    }

    /// A second copy of a plugin on the data directory another copy runs with exits 1, naming the directory.
    @Test func aSecondCopyOfAPluginOnTheSameDataDirectoryRefusesToStart() async throws {
        let directory = TemporaryDirectory.url("eventbus-twice").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let data = directory + "/plugins/counter"
        let binary = SupervisedPipeline.examplePluginDirectory + "/counter"
        // No broker: the first copy keeps trying to connect, and holds its lock meanwhile.
        let arguments = ["--data-dir", data, "--command", "ipc://\(directory)/nobody.sock", "--log-level", "warning"]
        let first = try RunningProcess(binary, arguments, standardOutput: .inherit)
        let deadline = ContinuousClock.now + .seconds(20)
        var held = false
        while !held && first.isRunning && ContinuousClock.now < deadline {
            var status = stat()
            held = stat(data + "/lock", &status) == 0 && Self.holdsFlock(first.processIdentifier, inode: UInt64(status.st_ino))
            if !held { try await Task.sleep(for: .milliseconds(50)) }  // a poll interval
        }
        do {
            try #require(held, "the first copy did not take its lock")

            let second = try await RunningProcess.run(binary, arguments, timeout: .seconds(20))
            let text = second.standardError
            #expect(second.status == 1, "\(text)")
            #expect(text.contains("another copy of plugin counter is running with data dir \(data)"), "\(text)")
            #expect(first.isRunning, "the first copy runs on")
        } catch {
            _ = try? await first.kill()
            throw error
        }
        try await first.kill()
    }
}
