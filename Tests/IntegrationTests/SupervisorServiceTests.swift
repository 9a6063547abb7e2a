import EventBusBroker
import EventBusSupervisor
import EventBusTesting
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The supervisor as a swift-service-lifecycle `Service`: a program that embeds the bus
/// adds it to its own `ServiceGroup`, and that group's graceful shutdown stops the
/// plugins and then the broker, which gives up its data directory.
@Suite struct SupervisorServiceTests {
    static func config(_ directory: String) throws -> SupervisorConfig {
        var broker = BrokerConfig()
        broker.dataDirectory = directory
        broker.commandEndpoint = "ipc://\(directory)-command.sock"
        broker.streamEndpoint = "ipc://\(directory)-stream.sock"
        return SupervisorConfig(broker: broker, pipeline: try Pipeline(stages: [
            SupervisedPipeline.plugin("relay", executable: "identity"),
        ]))
    }

    static var logger: Logger {
        var logger = Logger(label: "test.supervisor-service")
        logger.logLevel = .error
        return logger
    }

    @Test func anEnclosingGroupsShutdownStopsThePluginsAndTheBroker() async throws {
        let directory = TemporaryDirectory.url("eventbus-svc").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let supervisor = try Supervisor(config: try Self.config(directory), logger: Self.logger)
        let outer = ServiceGroup(configuration: .init(services: [supervisor], logger: Self.logger))
        let run = Task { try await outer.run() }
        var patience = Patience(.seconds(30))
        while !supervisor.isReady {
            guard patience.allowsAnotherLook() else {
                await outer.triggerGracefulShutdown()
                throw ProcessError("not ready within 30 s")
            }
            try await Task.sleep(for: .milliseconds(50))  // a poll interval
        }
        let pid = try #require(supervisor.processIdentifier(of: "relay"))
        await outer.triggerGracefulShutdown()
        try await run.value  // bounded: the plugin is killed after its stop timeout
        #expect(kill(pid, 0) != 0, "the plugin outlived the group")
        #expect(supervisor.processIdentifier(of: "relay") == nil)
        // The broker stopped too: its data directory is free for the next one.
        let next = try Supervisor(config: try Self.config(directory), logger: Self.logger)
        await next.stop()
        try await next.run()
    }

    /// A host program that holds every thread of the shared cooperative pool (here: tasks
    /// blocked on a semaphore) does not delay a restart: the supervisor's tasks run on a
    /// thread of its own and its waits need no pool thread.
    @Test func aPluginIsRestartedWhileTheHostHoldsEverySharedThread() async throws {
        let pipeline = try SupervisedPipeline([SupervisedPipeline.plugin("relay", executable: "identity")])
        try await pipeline.stopAfter {
            try await pipeline.waitUntilReady()
            let pid = try #require(pipeline.supervisor.processIdentifier(of: "relay"))
            let blockers = ProcessInfo.processInfo.activeProcessorCount + 2
            let release = DispatchSemaphore(value: 0)
            let restarted = Mutex<Int32?>(nil)
            let supervisor = pipeline.supervisor
            // Watched from a thread of its own, which releases the pool when it is done.
            Thread {
                kill(pid, SIGKILL)
                let deadline = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < deadline {
                    if let next = supervisor.processIdentifier(of: "relay"), next != pid {
                        restarted.withLock { $0 = next }
                        break
                    }
                    usleep(10_000)  // a poll interval
                }
                for _ in 0..<blockers { release.signal() }
            }.start()
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<blockers { group.addTask { release.wait() } }
            }
            #expect(restarted.withLock { $0 } != nil, "no restart while the shared pool was held")
        }
    }

    @Test func aSupervisorStoppedBeforeItRunsEndsCleanly() async throws {
        let directory = TemporaryDirectory.url("eventbus-svc").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let supervisor = try Supervisor(config: try Self.config(directory), logger: Self.logger)
        await supervisor.stop()
        try await supervisor.run()
        #expect(supervisor.processIdentifier(of: "relay") == nil)
        // Its broker is closed: the data directory is free.
        let next = try Supervisor(config: try Self.config(directory), logger: Self.logger)
        await next.stop()
        try await next.run()
    }
}
