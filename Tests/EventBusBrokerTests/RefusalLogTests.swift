import Testing
@testable import EventBusBroker

/// Issue 15: 1,766 refused connections in 10 s gave 1,766 log lines. Now the first is logged,
/// then at most one line per interval, counting what it stands for.
@Suite struct RefusalLogTests {
    @Test func aFloodGivesOneLinePerIntervalThatCountsEveryRefusal() {
        var log = RefusalLog(intervalMilliseconds: 10_000)
        var lines: [RefusalLog.Line] = []
        for index in 0..<1_766 {
            // 1,766 refusals over 10 s, 5.66 ms apart.
            let now = UInt64(1_000_000 + index * 10_000 / 1_766)
            if let line = log.refused(address: "10.0.0.\(index % 250)", now: now) { lines.append(line) }
            if let line = log.tick(now: now) { lines.append(line) }
        }
        #expect(lines.count == 1)
        #expect(lines.first?.count == 1)
        // Past the interval, the tick reports the rest.
        let rest = log.tick(now: 1_010_000)
        #expect(rest?.count == 1_765)
        #expect(rest?.lastAddress == "10.0.0.\(1_765 % 250)")
        #expect(log.tick(now: 1_030_000) == nil, "nothing held back, nothing logged")
    }

    @Test func refusalsFarApartAreEachLogged() {
        var log = RefusalLog(intervalMilliseconds: 10_000)
        #expect(log.refused(address: "a", now: 0)?.count == 1)
        #expect(log.refused(address: "b", now: 10_000) == RefusalLog.Line(count: 1, lastAddress: "b"))
        #expect(log.refused(address: "c", now: 25_000)?.count == 1)
    }
}
