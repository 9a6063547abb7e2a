import EventBusChaos
import EventBusCore
import Testing

struct FaultPlanTests {
    @Test func aSeedGivesTheSameRoundEveryTime() {
        for seed in [UInt64(1), 42, 6_835_423_750_565_931_294] {
            #expect(FaultPlan(seed: seed, publishers: 3) == FaultPlan(seed: seed, publishers: 3))
        }
    }

    @Test func theSeedsOfACampaignDrawEveryKindOfFaultAndBothPipelines() {
        var seed: UInt64 = 1
        var kinds = Set<String>()
        var pipelines = Set<[String]>()
        for _ in 0..<200 {
            let plan = FaultPlan(seed: seed, publishers: 3)
            kinds.insert(plan.fault.kind)
            pipelines.insert(plan.pipeline)
            if case .kill(.plugin(let name)) = plan.fault { #expect(plan.pipeline.contains(name)) }
            if case .stop(_, let milliseconds) = plan.fault { #expect((200...4_000).contains(milliseconds)) }
            if case .diskFull(let milliseconds) = plan.fault { #expect((500...4_000).contains(milliseconds)) }
            if case .clockJump(let seconds) = plan.fault { #expect((60...7_200).contains(abs(seconds))) }
            seed = FaultPlan.nextSeed(after: seed)
        }
        #expect(kinds == ["kill -9 eventbus up", "kill -9 receipt-reducer", "kill -9 read-privacy", "kill -9 delivery-privacy",
                          "kill -9 publisher", "SIGSTOP eventbus up", "SIGSTOP receipt-reducer", "SIGSTOP read-privacy",
                          "SIGSTOP delivery-privacy", "SIGSTOP publisher", "torn tail", "failing fsync", "disk full", "clock jump"])
        #expect(pipelines == [FaultPlan.defaultPipeline, ["receipt-reducer"]])
    }

    /// `eventbus-chaos mutant` skips the seeds of other faults: each mutant's fault must be drawn.
    @Test func everyMutantsFaultIsDrawnByTheCampaignsSeeds() {
        var seed: UInt64 = 20_261_126
        var kinds: [String] = []
        for _ in 0..<200 {
            let plan = FaultPlan(seed: seed, publishers: 3)
            if plan.atMilliseconds <= 1_000 { kinds.append(plan.fault.kind) }
            seed = FaultPlan.nextSeed(after: seed)
        }
        for mutant in Mutant.allCases {
            #expect(kinds.filter { $0.hasPrefix(mutant.fault) }.count >= 4, "\(mutant)")
        }
    }
}
