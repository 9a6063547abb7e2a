import EventBusSupervisor
import EventBusTesting
import Foundation
import Testing

/// The reducer's memory goals (docs/performance.md: ≤ 100 bytes per (channel, member),
/// ≤ 48 per retained message) measured, not computed: `eventbus-reducer-bench memory`
/// builds 200,000 member states, 100,000 more whose watermarks each moved six times
/// (three deliveries and three reads, so each keeps a history) and 1,000,000 messages
/// in a process of its own, with
/// the allocator setting `eventbus up` gives its plugins, and reports the growth of its
/// resident memory per item.
@Suite struct MemoryBudgetProcessTests {
    @Test func residentBytesPerMemberAndPerMessageStayWithinTheirBudgets() async throws {
        let bench = URL(fileURLWithPath: BuildFolder.eventbus).deletingLastPathComponent()
            .appendingPathComponent("eventbus-reducer-bench").path
        try #require(FileManager.default.isExecutableFile(atPath: bench), "\(bench) is not built")
        let allocator = Supervisor.allocatorEnvironment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let result = try await RunningProcess.run("/usr/bin/env", allocator + [bench, "memory"],
                                                   timeout: .seconds(300))
        #expect(result.status == 0, "\(result.standardError)")
        func figure(_ key: String) -> Int? {
            result.standardOutput.firstMatch(of: try! Regex("\(key)=([0-9]+)"))
                .flatMap { Int($0.output[1].substring ?? "") }
        }
        let member = try #require(figure("per_member_bytes"), "no per_member_bytes in: \(result.standardOutput)")
        let active = try #require(figure("per_active_member_bytes"), "no per_active_member_bytes in: \(result.standardOutput)")
        let message = try #require(figure("per_message_bytes"), "no per_message_bytes in: \(result.standardOutput)")
        #expect(member > 0 && member <= 100, "\(member) resident bytes per (channel, member)")
        #expect(active > 0 && active <= 100, "\(active) resident bytes per (channel, member) that read three times")
        #expect(message > 0 && message <= 48, "\(message) resident bytes per retained message")
    }
}
