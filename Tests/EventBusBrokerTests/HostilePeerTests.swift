import EventBus
import EventBusChaos
import Testing

@testable import EventBusBroker

/// The campaign's hostile peer (docs/reliability.md, "Hostile peers"), message by message:
/// each is refused with its code (or, with no request to answer, dropped), nothing reaches
/// the log, and an honest peer is served right after.
@Suite struct HostilePeerTests {
    @Test(arguments: HostileMessages.Kind.allCases)
    func eachHostileMessageIsRefusedAndLogsNothing(kind: HostileMessages.Kind) throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        bus.core.handle([Array("mallory".utf8)] + HostileMessages.message(kind, n: 1))
        try bus.pass()
        let answers = bus.replies()
        #expect(answers.allSatisfy { $0.verb == "ERR" }, "\(kind.rawValue): \(answers.map(\.verb))")
        #expect(bus.core.log.headSeq == 0, "\(kind.rawValue) reached the log")
        bus.send("PUB", [Array("in".utf8), Array(#"{"specversion":"1.0","id":"honest","source":"/api","type":"channel.created","subject":"messaging:a","time":"2026-11-25T08:00:00.000Z","data":{"cid":"messaging:a","members":["ann"]}}"#.utf8)], peer: "ann")
        try bus.pass()
        #expect(bus.reply()?.arguments == ["1"])
    }
}
