import EventBusService
import Synchronization
import Testing

@testable import EventBusPlugin

/// Exit statuses come from an error's kind, not from matching its text (issue 16, item 6).
@Suite struct PluginErrorTests {
    @Test(arguments: [["--bogus", "x"], ["--batch", "0"], ["--credit", "x"], ["--name"]])
    func aBadCommandLineIsAUsageError(arguments: [String]) {
        #expect {
            _ = try PluginConfiguration.parse(arguments, defaultName: "p")
        } throws: { error in
            (error as? PluginError)?.kind == .usage
        }
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
