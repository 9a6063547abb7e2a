import EventBusTesting
import Foundation
import Testing

/// `eventbus demo` against `eventbus up` (broker, reducer, both privacy filters): the
/// printed steps show what each user sees, and a second run against the same bus works too.
@Suite struct DemoCommandTests {
    static func demo(_ endpoint: String) async throws -> (status: Int32, output: String) {
        let result = try await RunningProcess.run(BuildFolder.eventbus, ["demo", "--command", endpoint, "--timeout", "20"], timeout: .seconds(120))
        return (result.status, result.standardOutput)
    }

    /// The lines printed under step `number` (up to the next step).
    static func step(_ number: Int, in output: String) -> [String] {
        let lines = output.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.hasPrefix("\(number). ") }) else { return [] }
        let rest = lines[(start + 1)...]
        let end = rest.firstIndex { $0.first?.isNumber == true } ?? lines.endIndex
        return Array(lines[start..<end])
    }

    @Test func theDemoPrintsWhatEachUserSeesAndHidesCarolsReadAfterHerPrivacyChange() async throws {
        // `eventbus up` with its default pipeline, once it logged `eventbus ready`.
        let bus = try UpProcess()
        try await bus.start()
        try await bus.terminateAfter {
            for run in 1...2 {
                let (status, output) = try await Self.demo(bus.commandEndpoint)
                #expect(status == 0, "run \(run): \(output)")
                // Everyone in the channel sees alice's messages; badges count them.
                #expect(Self.step(2, in: output).contains(#"   alice, bob, carol see: message.new m1 from alice: "Lunch at noon?""#), "\(output)")
                #expect(Self.step(3, in: output).contains("   unread badges: alice 0, bob 2, carol 2"))
                #expect(Self.step(4, in: output).contains("   alice, bob, carol see: message.delivered: bob's device has everything up to m2"))
                // bob's read goes to the channel; his own devices get their badge.
                let read = Self.step(6, in: output)
                #expect(read.contains("   alice, bob, carol see: message.read: bob read up to m1"))
                #expect(read.contains("   bob (own devices only) sees: notification.mark_read: read up to m1; unread here 1, total 1"))
                #expect(read.contains("   m1 read by (as alice sees it): bob"))
                // Mark unread reaches only bob.
                let unread = Self.step(7, in: output)
                #expect(unread.contains("   bob (own devices only) sees: notification.mark_unread: unread from m1; unread here 2, total 2"))
                #expect(!unread.contains { $0.contains("alice, bob, carol see") })
                #expect(Self.step(8, in: output).contains("   unread badges: alice 0, bob 0, carol 2"))
                // After carol turns read receipts off, her read reaches her devices only.
                let hidden = Self.step(10, in: output)
                #expect(hidden.contains("   carol (own devices only) sees: notification.mark_read: read up to m2; unread here 0, total 0"), "\(output)")
                #expect(!hidden.contains { $0.contains("message.read: carol") }, "\(output)")
                #expect(hidden.contains("   m2 read by (as alice sees it): bob (1 hidden)"))
                // Made with receipts off, her read is never shown, not even in her own view (docs/events.md rule 19).
                #expect(hidden.contains("   m2 read by (as carol sees it): bob"), "\(output)")
                #expect(hidden.contains("   unread badges: alice 0, bob 0, carol 0"))
                #expect(!output.contains("late events"))
            }
        }
    }
}
