import EventBusCore
import Testing

@testable import EventBusBroker

/// A consumer's delivery walks ``StageIndex/candidates(in:from:)``: it must yield exactly
/// the SEQs of the consumer's stages from the start SEQ on, in order, as a filter of the
/// whole log would (the reference here), trimmed or not.
@Suite struct StageIndexTests {
    /// Everything the walk yields, up to `last` (the caller's bound, the last committed SEQ).
    private static func walk(_ candidates: StageIndex.Candidates, through last: UInt64) -> [UInt64] {
        var candidates = candidates
        var seqs: [UInt64] = []
        while let seq = candidates.next(), seq <= last { seqs.append(seq) }
        return seqs
    }

    @Test func oneStageYieldsItsOwnSEQsFromTheStartOn() {
        var index = StageIndex()
        index.append(stage: "in", seqs: 1...3)
        index.append(stage: "out", seq: 4)
        index.append(stage: "in", seqs: 5...6)
        #expect(Self.walk(index.candidates(in: ["in"], from: 2), through: 10) == [2, 3, 5, 6])
        #expect(Self.walk(index.candidates(in: ["out"], from: 1), through: 10) == [4])
        #expect(Self.walk(index.candidates(in: ["out"], from: 5), through: 10) == [])
        #expect(index.candidates(in: ["in"], from: 4).peek() == 5)
    }

    @Test func severalStagesMergeInLogOrder() {
        var index = StageIndex()
        index.append(stage: "in", seqs: 1...2)
        index.append(stage: "out", seq: 3)
        index.append(stage: "diag", seq: 4)
        index.append(stage: "in", seq: 5)
        index.append(stage: "out", seq: 6)
        #expect(Self.walk(index.candidates(in: ["out", "in"], from: 2), through: 10) == [2, 3, 5, 6])
        #expect(Self.walk(index.candidates(in: ["diag", "nowhere"], from: 1), through: 10) == [4])
        #expect(index.candidates(in: ["nowhere"], from: 1).peek() == nil)
    }

    @Test func everyStageIsEachSEQInTurnUpToTheCallersBound() {
        let index = StageIndex()
        let candidates = index.candidates(in: nil, from: 7)
        #expect(candidates.peek() == 7)
        #expect(Self.walk(candidates, through: 10) == [7, 8, 9, 10])
    }

    /// Generated logs of three stages, trimmed at random: every walk equals the filter.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func generatedLogsAgreeWithAFilterOfTheLog(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let stages = ["in", "out", "diag"]
        var index = StageIndex()
        var log: [(seq: UInt64, stage: String)] = []
        var floor: UInt64 = 1
        for _ in 0..<400 {
            let stage = stages[Int.random(in: 0..<3, using: &random)]
            let run = UInt64.random(in: 1...5, using: &random)
            let first = UInt64(log.count) + 1
            index.append(stage: stage, seqs: first...(first + run - 1))
            for seq in first...(first + run - 1) { log.append((seq, stage)) }
            if Int.random(in: 0..<20, using: &random) == 0 {
                floor = UInt64.random(in: floor...UInt64(log.count), using: &random)
                index.trim(below: floor)
            }
            let wanted = stages.filter { _ in Bool.random(using: &random) }
            let from = UInt64.random(in: 1...UInt64(log.count) + 1, using: &random)
            let last = UInt64.random(in: 0...UInt64(log.count), using: &random)
            let expected = log.filter { $0.seq >= max(from, floor) && $0.seq <= last && wanted.contains($0.stage) }.map(\.seq)
            #expect(Self.walk(index.candidates(in: wanted, from: from), through: last) == expected,
                    "stages \(wanted), from \(from), through \(last), trimmed below \(floor)")
        }
    }
}
