import EventBusService
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
}
