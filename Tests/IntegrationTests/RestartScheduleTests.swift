import EventBusBroker
import Testing

@testable import EventBusSupervisor

/// The supervisor's restart rule, with plain values: backoff doubling to its cap, a
/// stable run starting over, a crash loop after the limit and out of it again.
@Suite struct RestartScheduleTests {
    static func schedule() throws -> RestartSchedule {
        var config = SupervisorConfig(broker: BrokerConfig(), pipeline: try Pipeline(stages: []))
        config.initialBackoff = .milliseconds(100)
        config.maximumBackoff = .milliseconds(500)
        config.stableAfter = .seconds(10)
        config.crashLoopLimit = 6
        config.crashLoopBackoff = .seconds(30)
        return RestartSchedule(config)
    }

    @Test func quickExitsDoubleTheBackoffUpToItsCap() throws {
        var schedule = try Self.schedule()
        let waits = (0..<5).map { _ in schedule.exited(after: .seconds(1)).wait }
        #expect(waits == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(500), .milliseconds(500)])
        #expect(!schedule.crashLooping)
    }

    @Test func aStableRunStartsTheBackoffOver() throws {
        var schedule = try Self.schedule()
        _ = schedule.exited(after: .seconds(1))
        _ = schedule.exited(after: .seconds(1))
        let decision = schedule.exited(after: .seconds(10))
        #expect(decision == .init(wait: .milliseconds(100), crashLooping: false, enteredCrashLoop: false, quickExits: 0))
        #expect(schedule.exited(after: .seconds(1)).wait == .milliseconds(200))
    }

    @Test func theLimitOfQuickExitsIsACrashLoopReportedOnce() throws {
        var schedule = try Self.schedule()
        let decisions = (0..<8).map { _ in schedule.exited(after: .milliseconds(5)) }
        #expect(decisions.map(\.crashLooping) == [false, false, false, false, false, true, true, true])
        #expect(decisions.map(\.enteredCrashLoop) == [false, false, false, false, false, true, false, false])
        #expect(decisions.suffix(3).allSatisfy { $0.wait == .seconds(30) })
        #expect(decisions.last?.quickExits == 8)
    }

    @Test func aStableRunEndsTheCrashLoop() throws {
        var schedule = try Self.schedule()
        for _ in 0..<7 { _ = schedule.exited(after: .zero) }
        #expect(schedule.crashLooping)
        let decision = schedule.exited(after: .seconds(11))
        #expect(!decision.crashLooping && decision.wait == .milliseconds(100))
        #expect(!schedule.crashLooping)
        // A new run of quick exits needs the whole limit again.
        let next = (0..<5).map { _ in schedule.exited(after: .zero).crashLooping }
        #expect(next == [false, false, false, false, false])
        #expect(schedule.exited(after: .zero).enteredCrashLoop)
    }
}
