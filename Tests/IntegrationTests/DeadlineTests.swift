import EventBusTesting
import Testing

/// `withDeadline`, the hang guard that replaces Swift Testing's `.timeLimit`.
@Suite struct DeadlineTests {
    @Test func aBodyThatEndsInTimeGivesItsValue() async throws {
        let value = try await withDeadline(.seconds(600)) { 42 }
        #expect(value == 42)
    }

    @Test func aBodyThatHangsIsCancelledAndNamed() async throws {
        let error = await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(50), "the hanging body") {
                try await Task.sleep(for: .seconds(3_600))  // a simulated slow peer: only cancellation ends it
                return 0
            }
        }
        #expect(error?.what == "the hanging body")
        #expect(error?.description == "the hanging body did not end within 0.05 seconds")
    }

    @Test func aBodysErrorIsThrownAsItIs() async throws {
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await withDeadline(.seconds(600)) { () async throws -> Int in throw Refused() }
        }
    }
}
