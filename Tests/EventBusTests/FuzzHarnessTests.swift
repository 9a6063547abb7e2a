import Foundation
import Testing
import EventBus
import EventBusFuzzing

/// The fuzz target of `make fuzz`, run by `make test` as a seeded harness with a fixed budget.
@Suite struct FuzzHarnessTests {
    static let corpusDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/corpus").path

    /// Mutations per run: EVENTBUS_FUZZ_ITERATIONS, or 60,000 (a few seconds in a debug build).
    static var iterations: Int {
        ProcessInfo.processInfo.environment["EVENTBUS_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 60_000
    }

    @Test func theCorpusHoldsAValidEventOfEveryIngressTypeAndEveryRequestVerb() throws {
        let corpus = try FuzzCorpus.load(from: Self.corpusDirectory)
        #expect(corpus.count >= 30)
        var types: Set<String> = []
        for input in corpus {
            if let event = try? EventValidator.validate(input, stage: "in") { types.insert(event.envelope.type) }
        }
        let ingress = Set(EventType.allCases.filter(\.isIngress).map(\.rawValue))
        #expect(ingress.subtracting(types).isEmpty, "no valid corpus event of \(ingress.subtracting(types).sorted())")
        let verbs = Set(corpus.compactMap { input -> String? in
            let lines = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            return lines.count > 1 && lines[0].elementsEqual("EB1".utf8) ? String(decoding: lines[1], as: UTF8.self) : nil
        })
        #expect(verbs.isSuperset(of: ["HELLO", "PING", "PUB", "CONSUME", "ACK", "CANCEL", "REQ", "STATS"]))
    }

    @Test func theSameSeedMutatesTheSameWay() {
        var a = FuzzMutator(seed: 7), b = FuzzMutator(seed: 7)
        let input = Array(#"{"a":[1,2,3]}"#.utf8)
        for _ in 0..<100 { #expect(a.mutate(input) == b.mutate(input)) }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func mutatedInputsKeepEveryInvariant(seed: UInt64) throws {
        let corpus = try FuzzCorpus.load(from: Self.corpusDirectory)
        let harness = FuzzHarness(corpus: corpus, seed: seed)
        // A run of no mutations proves nothing: EVENTBUS_FUZZ_ITERATIONS=0 (or 1, 2) fails.
        try #require(Self.iterations / 3 >= 1, "EVENTBUS_FUZZ_ITERATIONS=\(Self.iterations) runs no mutation")
        do {
            let checked = try harness.run(iterations: Self.iterations / 3)
            #expect(checked == corpus.count + Self.iterations / 3)
        } catch {
            Issue.record("seed \(seed): \(error)")
        }
    }
}
