import Foundation
import Testing

@testable import EventBusBroker

/// The clock the fault campaign makes jump: the wall clock moves by the file's offset, the
/// monotonic clock never does.
@Suite struct SkewedClockTests {
    @Test func theWallClockFollowsTheFileAndTheMonotonicOneDoesNot() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("skew-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = SkewedClock(path: path, rereadMilliseconds: 0)
        // No file: no offset.
        #expect(clock.currentOffset() == 0)
        try "7200000\n".write(toFile: path, atomically: true, encoding: .utf8)
        let ahead = clock.wallMilliseconds()
        #expect(ahead >= Clock.wallMilliseconds() + 7_100_000)
        try "-3600000".write(toFile: path, atomically: true, encoding: .utf8)
        let behind = clock.wallMilliseconds()
        #expect(behind + 3_500_000 <= Clock.wallMilliseconds())
        #expect(behind < ahead)
        // Not a number: no offset.
        try "soon".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(clock.currentOffset() == 0)
        let before = clock.monotonicMilliseconds()
        #expect(clock.monotonicMilliseconds() >= before)
    }

    @Test func theEnvironmentChoosesTheClock() {
        #expect(BrokerClocks.fromEnvironment([:]) is SystemClock)
        #expect((BrokerClocks.fromEnvironment([SkewedClock.environmentVariable: "/tmp/x"]) as? SkewedClock)?.path == "/tmp/x")
    }
}
