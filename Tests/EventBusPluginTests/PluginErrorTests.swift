import Dispatch
import EventBusService
import Logging
import ServiceLifecycle
import Synchronization
import Testing

@testable import EventBusPlugin

/// Exit statuses come from an error's kind, not from matching its text (issue 16, item 6).
@Suite struct PluginErrorTests {
    @Test(arguments: [["--bogus", "x"], ["--batch", "0"], ["--credit", "x"], ["--name"], ["--log-level", "loud"]])
    func aBadCommandLineIsAUsageError(arguments: [String]) {
        guard case .failure(let exit) = PluginCommandLine<PluginOptions>.read(arguments) else {
            Issue.record("\(arguments) was accepted")
            return
        }
        #expect(exit.status == 2)
        #expect(!exit.message.isEmpty)
    }

    @Test func otherErrorsAreRuntimeErrors() {
        #expect(PluginError("the broker refused the output").kind == .runtime)
    }

    /// The one bridge from a blocking loop to swift-service-lifecycle: it ends with the loop,
    /// with the loop's error.
    @Test func aBlockingServiceEndsWithItsLoop() async throws {
        let ran = Mutex(false)
        try await BlockingService(name: "test.loop", run: { ran.withLock { $0 = true } }, stop: {}).run()
        #expect(ran.withLock { $0 })
        await #expect(throws: PluginError.self) {
            try await BlockingService(name: "test.failing", run: { throw PluginError("loop failed") }, stop: {}).run()
        }
    }

    /// A plugin's runner that fails beside its lease loop: the group cancels the lease loop,
    /// which must stop, so that the failure ends the group (and the process, with the
    /// error logged) instead of hanging with the lease renewed forever.
    @Test func aFailingLoopStopsTheLoopBesideIt() async throws {
        let wake = DispatchSemaphore(value: 0)
        let stopped = Mutex(false)
        let renewer = BlockingService(name: "test.renewer", run: {
            while !stopped.withLock({ $0 }) { _ = wake.wait(timeout: .now() + .seconds(3600)) }
        }, stop: {
            stopped.withLock { $0 = true }
            wake.signal()
        })
        let failing = BlockingService(name: "test.failing", run: { throw PluginError("restore failed") }, stop: {})
        let group = ServiceGroup(configuration: .init(services: [
            .init(service: failing),
            .init(service: renewer, successTerminationBehavior: .ignore, failureTerminationBehavior: .gracefullyShutdownGroup),
        ], logger: Logger(label: "test.group")))
        let run = Task { try await group.run() }
        // A minute of patience; then the renewer is stopped by hand so that the test ends, failed.
        var patience = 600
        while !stopped.withLock({ $0 }) && patience > 0 {
            try await Task.sleep(for: .milliseconds(100))  // a poll interval
            patience -= 1
        }
        #expect(stopped.withLock { $0 }, "the group did not stop the loop beside the failed one")
        stopped.withLock { $0 = true }
        wake.signal()
        await #expect(throws: PluginError.self) { try await run.value }
    }
}
