import EventBusSupervisor
import Foundation
import Testing

/// A plugin lives no longer than its supervisor, and one copy of a plugin runs per data directory.
@Suite(.serialized) struct PluginLifetimeTests {
    /// SIGKILL of `eventbus up` takes its plugins with it (the kernel's parent-death
    /// signal); started again on the same data directory, each plugin runs once.
    @Test func pluginsDieWithAKilledSupervisorAndRunOnceAfterARestart() throws {
        let up = try UpProcess()
        try up.start()
        let before = up.pluginProcesses()
        #expect(before.mapValues(\.count) == Dictionary(uniqueKeysWithValues: Pipeline.defaultNames.map { ($0, 1) }), "\(before)")

        up.kill()
        let old = before.values.flatMap { $0 }
        let prefix = up.dataDirectory + "/plugins/"
        func survivors() -> [pid_t] { old.filter { UpProcess.isRunning($0) && UpProcess.pluginName($0, prefix: prefix) != nil } }
        let deadline = Date().addingTimeInterval(10)
        while !survivors().isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(survivors().isEmpty, "plugins outlived the killed supervisor: \(survivors())")

        try up.start()
        let after = up.pluginProcesses()
        #expect(after.mapValues(\.count) == Dictionary(uniqueKeysWithValues: Pipeline.defaultNames.map { ($0, 1) }), "\(after)")
        #expect(Set(after.values.flatMap { $0 }).isDisjoint(with: old))
    }
}
