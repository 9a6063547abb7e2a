import EventBusBroker
import EventBusService
import EventBusTesting
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import ServiceLifecycle
import Testing

@testable import EventBusSupervisor

/// A plugin process as a service of a `ServiceGroup`. The supervisor sees a plugin's
/// exit from the kernel, not from Foundation's `Process`, which on Linux waits for
/// every process holding a socket it gave the child (swift-corelibs-foundation #4795):
/// here a grandchild that lives on.
@Suite struct PluginProcessTests {
    static func process(_ script: String, stopTimeout: Duration = .seconds(1)) throws -> PluginProcess {
        var config = SupervisorConfig(broker: BrokerConfig(), pipeline: try Pipeline(stages: []))
        config.initialBackoff = .milliseconds(50)
        config.stopTimeout = stopTimeout
        var logger = Logger(label: "test.plugin-process")
        logger.logLevel = .critical
        return PluginProcess(name: "script", executable: "/bin/sh", arguments: ["-c", script], config: config, logger: logger)
    }

    /// Runs `plugin` in a group of its own while `body` runs, then shuts the group down
    /// gracefully and waits for it to end.
    static func running(_ plugin: PluginProcess, _ body: () async throws -> Void) async throws {
        var logger = Logger(label: "test.plugin-group")
        logger.logLevel = .critical
        let group = ServiceGroup(configuration: .init(services: [plugin], logger: logger))
        // As the supervisor does: the group's tasks on a thread of their own, so that a
        // test blocking the shared pool elsewhere cannot delay a restart or a stop.
        let executor = ThreadExecutor(name: "test.plugin-group")
        defer { executor.shutdown() }
        let run = Task { try await withTaskExecutorPreference(executor) { try await group.run() } }
        do {
            try await body()
        } catch {
            await group.triggerGracefulShutdown()
            _ = await run.result
            throw error
        }
        await group.triggerGracefulShutdown()
        // Bounded: the plugin's SIGKILL comes after its stop timeout.
        try await run.value
    }

    static func waitFor(_ what: String, _ condition: () -> Bool) async throws {
        var patience = Patience(.seconds(10))
        while !condition() {
            guard patience.allowsAnotherLook() else { throw ProcessError("\(what): not within 10 s") }
            try await Task.sleep(for: .milliseconds(20))  // a poll interval
        }
    }

    @Test func anExitIsSeenAndRestartedAtOnceWhileAGrandchildLivesOn() async throws {
        let plugin = try Self.process("sleep 20 & exit 3")
        try await Self.running(plugin) {
            try await Self.waitFor("a restart") { plugin.restartCount >= 2 }
        }
    }

    @Test func gracefulShutdownEndsThePluginWhileAGrandchildLivesOn() async throws {
        try await TemporaryDirectory.with("plugin-grandchild") { root in
            // The plugin leaves a grandchild holding its output and says its pid. It sleeps far
            // longer than the test can take on a loaded machine (it once took 201 s, and a
            // 60 s grandchild was gone when checked); the test kills it at the end.
            let file = root.appendingPathComponent("grandchild").path
            let plugin = try Self.process("sleep 3600 & echo $! > \(file); exec sleep 3600")
            var pid: Int32?
            try await Self.running(plugin) {
                try await Self.waitFor("the plugin's start") { plugin.processIdentifier != nil && FileManager.default.fileExists(atPath: file) }
                pid = plugin.processIdentifier
            }
            let grandchild = try #require(Int32(try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
            defer { kill(grandchild, SIGKILL) }
            // The service ended with its plugin, not with the grandchild, which still runs.
            #expect(kill(grandchild, 0) == 0, "shutdown waited for the grandchild")
            #expect(plugin.processIdentifier == nil)
            #expect(kill(try #require(pid), 0) != 0, "the plugin still runs after its service ended")
            #expect(plugin.restartCount == 0, "a plugin stopped at shutdown was restarted")
        }
    }

    @Test func aPluginThatIgnoresSIGTERMIsKilledAfterTheStopTimeout() async throws {
        // The shell ignores TERM and waits; only SIGKILL ends it.
        let plugin = try Self.process("trap '' TERM; while :; do sleep 1; done", stopTimeout: .milliseconds(300))
        var pid: Int32?
        try await Self.running(plugin) {
            try await Self.waitFor("the plugin's start") { plugin.processIdentifier != nil }
            pid = plugin.processIdentifier
        }
        #expect(kill(try #require(pid), 0) != 0, "the plugin outlived its service")
    }

    /// A backoff of a day: only a shutdown that ends the wait lets the test finish. The
    /// deadline only turns a hang into a failure; it is generous because this test's own
    /// steps run on the shared pool, which SupervisorServiceTests holds whole for up to
    /// 30 s while the suites run in parallel (a full run on a loaded machine went past 60 s).
    @Test func aShutdownDuringTheBackoffEndsItAtOnce() async throws {
        try await withDeadline(.seconds(600)) {
            var config = SupervisorConfig(broker: BrokerConfig(), pipeline: try Pipeline(stages: []))
            config.initialBackoff = .seconds(86_400)
            var logger = Logger(label: "test.plugin-process")
            logger.logLevel = .critical
            let plugin = PluginProcess(name: "quick", executable: "/bin/sh", arguments: ["-c", "exit 1"], config: config, logger: logger)
            try await Self.running(plugin) {
                try await Self.waitFor("the first exit") { plugin.restartCount == 1 }
            }
            #expect(plugin.restartCount == 1)
        }
    }

    @Test func aMissingExecutableIsRetriedNotFatal() async throws {
        var config = SupervisorConfig(broker: BrokerConfig(), pipeline: try Pipeline(stages: []))
        config.initialBackoff = .milliseconds(10)
        var logger = Logger(label: "test.plugin-process")
        logger.logLevel = .critical
        let plugin = PluginProcess(name: "missing", executable: "/nonexistent/plugin", arguments: [], config: config, logger: logger)
        try await Self.running(plugin) {
            try await Self.waitFor("retries") { plugin.restartCount >= 3 }
        }
    }
}
