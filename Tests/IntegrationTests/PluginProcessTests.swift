import EventBusBroker
import Foundation
import Logging
import Testing

@testable import EventBusSupervisor

/// The supervisor sees a plugin's exit from the kernel, not from Foundation's
/// `Process`, which on Linux waits for every process holding a socket it gave
/// the child (swift-corelibs-foundation #4795): here a grandchild that lives on.
@Suite struct PluginProcessTests {
    static func process(_ script: String) throws -> PluginProcess {
        var config = SupervisorConfig(broker: BrokerConfig(), pipeline: try Pipeline(stages: []))
        config.initialBackoff = .milliseconds(50)
        config.stopTimeout = .seconds(1)
        var logger = Logger(label: "test.plugin-process")
        logger.logLevel = .critical
        return PluginProcess(name: "script", executable: "/bin/sh", arguments: ["-c", script], config: config, logger: logger)
    }

    @Test func anExitIsSeenAndRestartedAtOnceWhileAGrandchildLivesOn() throws {
        let plugin = try Self.process("sleep 20 & exit 3")
        plugin.start()
        defer { plugin.stop() }
        let deadline = Date().addingTimeInterval(3)
        while plugin.restartCount == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }  // a poll interval
        #expect(plugin.restartCount >= 1, "the exit went unseen while the grandchild lived")
    }

    @Test func stopReturnsOnceThePluginHasEndedWhileAGrandchildLivesOn() throws {
        let plugin = try Self.process("sleep 20 & exec sleep 60")
        plugin.start()
        let started = Date().addingTimeInterval(3)
        while plugin.processIdentifier == nil && Date() < started { Thread.sleep(forTimeInterval: 0.02) }  // a poll interval
        #expect(plugin.processIdentifier != nil)
        let before = Date()
        plugin.stop()
        // SIGTERM, or SIGKILL after the 1 s stop timeout (a test runner may pass SIGTERM
        // blocked), ends `sleep 60`; stop returns then, not when the grandchild ends.
        #expect(Date().timeIntervalSince(before) < 5)
    }
}
