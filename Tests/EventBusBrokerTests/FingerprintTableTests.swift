import Testing

@testable import EventBusBroker

/// The dedup window's hash table agrees with a `Dictionary` under any mix of
/// inserts, updates and removals, across growth and long probe runs.
@Suite struct FingerprintTableTests {
    private struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
    }

    private static func key(_ n: Int) -> DedupKey {
        DedupKey(stage: Array("in".utf8), source: Array("/test".utf8), id: Array("id-\(n)".utf8))
    }

    @Test(arguments: [1 as UInt64, 2, 3])
    func agreesWithADictionaryUnderRandomInsertsUpdatesAndRemovals(seed: UInt64) {
        var random = Generator(state: seed)
        // A small key space and a table that starts tiny: many collisions, many grows, long runs.
        var table = FingerprintTable(capacity: 1)
        var model: [DedupKey: UInt64] = [:]
        for step in 0..<20_000 {
            let key = Self.key(Int(random.next() % 3_000))
            switch random.next() % 3 {
            case 0, 1:
                let seq = UInt64(step + 1)
                #expect(table.update(seq, for: key) == model.updateValue(seq, forKey: key))
            default:
                #expect(table.remove(key) == model.removeValue(forKey: key))
            }
            #expect(table.count == model.count)
        }
        for n in 0..<3_000 {
            let key = Self.key(n)
            #expect(table.seq(for: key) == model[key])
        }
    }

    @Test func removingEveryKeyLeavesAnEmptyTableThatStillWorks() {
        var table = FingerprintTable(capacity: 16)
        for n in 0..<1_000 { table.update(UInt64(n + 1), for: Self.key(n)) }
        for n in stride(from: 0, to: 1_000, by: 2) { #expect(table.remove(Self.key(n)) == UInt64(n + 1)) }
        for n in 0..<1_000 { #expect(table.seq(for: Self.key(n)) == (n % 2 == 0 ? nil : UInt64(n + 1))) }
        for n in stride(from: 1, to: 1_000, by: 2) { table.remove(Self.key(n)) }
        #expect(table.count == 0)
        #expect(table.remove(Self.key(7)) == nil)
        table.update(42, for: Self.key(7))
        #expect(table.seq(for: Self.key(7)) == 42)
    }

    @Test func aCopyIsAValueThatChangesApartFromTheOriginal() {
        var table = FingerprintTable(capacity: 16)
        for n in 0..<10 { table.update(UInt64(n + 1), for: Self.key(n)) }
        var copy = table
        copy.update(99, for: Self.key(0))
        copy.remove(Self.key(1))
        for n in 10..<100 { copy.update(UInt64(n + 1), for: Self.key(n)) }  // grows
        #expect(table.seq(for: Self.key(0)) == 1)
        #expect(table.seq(for: Self.key(1)) == 2)
        #expect(table.seq(for: Self.key(50)) == nil)
        #expect(table.count == 10)
        #expect(copy.seq(for: Self.key(0)) == 99 && copy.seq(for: Self.key(1)) == nil && copy.count == 99)
        table.remove(Self.key(2))
        #expect(copy.seq(for: Self.key(2)) == 3)
    }

    @Test func aTableSizedForAMillionKeysStartsEmptyAndHoldsWhatIsPut() {
        // Sized up front as the dedup window is: 2^21 slots, from zero pages that read as empty.
        var table = FingerprintTable(capacity: 1_000_000)
        #expect(table.count == 0)
        for n in stride(from: 0, to: 1_000_000, by: 997) { #expect(table.seq(for: Self.key(n)) == nil) }
        for n in 0..<1_000 { table.update(UInt64(n + 1), for: Self.key(n)) }
        for n in 0..<1_000 { #expect(table.seq(for: Self.key(n)) == UInt64(n + 1)) }
        #expect(table.seq(for: Self.key(1_000)) == nil)
    }
}
