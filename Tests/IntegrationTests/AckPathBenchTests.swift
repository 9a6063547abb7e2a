import EventBusTesting
import Foundation
import Testing

/// `eventbus-reducer-bench path`, the in-process figures of `make bench` (one ack through the
/// plugin's path, and the broker's check of each event it writes), stops with a failed
/// precondition when the fold writes fewer events than acks or the broker's check refuses one of
/// them. A short run shows that both hold and that it reports both figures; timings are never
/// asserted.
@Suite struct AckPathBenchTests {
    @Test func theAckPathWritesEventsTheBrokerAccepts() async throws {
        let bench = URL(fileURLWithPath: BuildFolder.eventbus).deletingLastPathComponent()
            .appendingPathComponent("eventbus-reducer-bench").path
        try #require(FileManager.default.isExecutableFile(atPath: bench), "\(bench) is not built")
        let result = try await RunningProcess.run(bench, ["path", "3000"], timeout: .seconds(120))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains(/ack_path_us=[0-9.]+ output_check_ns=[0-9]+/), "\(result.standardOutput)")
    }
}
