/// Runs ``FuzzTarget`` over a corpus and seeded mutations of it: the fuzzer
/// of `make test`, and of `make fuzz` when the toolchain has no libFuzzer.
public struct FuzzHarness {
    /// The starting inputs.
    public let corpus: [[UInt8]]
    /// The seed of the mutations.
    public let seed: UInt64

    /// Creates a harness over `corpus` (it must not be empty).
    public init(corpus: [[UInt8]], seed: UInt64) {
        self.corpus = corpus
        self.seed = seed
    }

    /// Checks every corpus input, then `iterations` mutated ones, while `keepGoing` says so.
    ///
    /// - Returns: how many inputs were checked.
    /// - Throws: the first ``FuzzFailure``.
    @discardableResult
    public func run(iterations: Int, keepGoing: () -> Bool = { true }) throws(FuzzFailure) -> Int {
        for input in corpus {
            try FuzzTarget.check(input)
        }
        guard !corpus.isEmpty else { return 0 }
        var mutator = FuzzMutator(seed: seed)
        var checked = corpus.count
        for iteration in 0..<iterations {
            if iteration % 1_000 == 0 && !keepGoing() { break }
            let base = corpus[mutator.below(corpus.count)]
            let other = corpus[mutator.below(corpus.count)]
            var input = mutator.mutate(base, other: other)
            // Now and then a mutant of a mutant, to get further from the corpus.
            if mutator.below(4) == 0 { input = mutator.mutate(input, other: other) }
            try FuzzTarget.check(input)
            checked += 1
        }
        return checked
    }
}
