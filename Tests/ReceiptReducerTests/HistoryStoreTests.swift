import EventBusCore
import Testing

@testable import ReceiptReducer

/// ``HistoryStore`` and ``CompactHistory`` on their own, against a map of
/// whole histories: whatever is stored reads back the same, compact when it
/// fits and whole when it does not, and freed places are taken again.
@Suite struct HistoryStoreTests {
    /// A record at the newest crossings of `read` and `delivered` (or -1), with that history.
    static func record(_ read: Crossings, _ delivered: Crossings) -> MemberState {
        let r = read.entries.last, d = delivered.entries.last
        return MemberState(
            user: 7, readPosition: r?.position ?? -1, deliveredPosition: d?.position ?? -1, isMember: true,
            readTime: r?.time ?? TimeTable.none, deliveredTime: d?.time ?? TimeTable.none, readStamp: 3)
    }

    /// Up to three moves forward, mostly close together, sometimes far apart or back in time.
    static func crossings(_ rng: inout SplitMix64) -> Crossings {
        var crossings = Crossings()
        var position = Int32(rng.below(1_000)) - 1
        var time: Int64 = 1_790_000_000_000 + Int64(rng.below(1_000_000))
        for _ in 0..<rng.below(Crossings.capacity + 2) {
            position += rng.chance(5) ? Int32(70_000 + rng.below(10)) : Int32(1 + rng.below(40))
            time += rng.chance(5) ? -Int64(rng.below(1_000)) : rng.chance(5) ? 5_000_000_000 : Int64(rng.below(600_000))
            crossings.append(position, time)
        }
        return crossings
    }

    @Test func aHistoryThatFitsIsCompactAndReadsBackTheSame() {
        var read = Crossings(position: 10, time: 1_000)
        read.append(12, 61_000)
        read.append(40, 3_600_000)
        var delivered = Crossings(position: 12, time: 500)
        delivered.append(40, 3_599_000)
        var record = Self.record(read, delivered)
        var store = HistoryStore()
        store.store(WatermarkHistory(read: read, delivered: delivered), for: &record, slot: 0)
        #expect(record.history.compactIndex == 0)
        #expect(store.history(of: record, slot: 0) == WatermarkHistory(read: read, delivered: delivered))
        #expect(store.count == 1)
    }

    @Test func aHistoryThatDoesNotFitIsKeptWhole() {
        for (step, lapse): (Int32, Int64) in [(70_000, 10), (3, -1), (3, 5_000_000_000)] {
            var read = Crossings(position: 10, time: 1_000)
            read.append(10 + step, 1_000 + lapse)
            var record = Self.record(read, Crossings())
            var store = HistoryStore()
            let history = WatermarkHistory(read: read, delivered: Crossings())
            store.store(history, for: &record, slot: 4)
            #expect(record.history == .whole, "step \(step), lapse \(lapse)")
            #expect(store.history(of: record, slot: 4) == history)
        }
    }

    @Test func aHistoryTheRecordImpliesTakesNothing() {
        var record = Self.record(Crossings(position: 5, time: 9), Crossings(position: 5, time: 9))
        var store = HistoryStore()
        store.store(WatermarkHistory(implied: record), for: &record, slot: 1)
        #expect(record.history == .none)
        #expect(store.isEmpty)
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func randomStoresAndRemovesAgreeWithAMap(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var store = HistoryStore()
        var records: [MemberState] = []
        var model: [WatermarkHistory] = []
        for _ in 0..<200 {
            let history = WatermarkHistory(read: Self.crossings(&rng), delivered: Self.crossings(&rng))
            records.append(Self.record(history.read, history.delivered))
            model.append(WatermarkHistory(implied: records[records.count - 1]))
        }
        var mostCompact = 0
        for round in 0..<20_000 {
            let slot = rng.below(records.count)
            if rng.chance(20) {
                store.remove(for: &records[slot], slot: Int32(slot))
                model[slot] = WatermarkHistory(implied: records[slot])
            } else {
                let history = WatermarkHistory(read: Self.crossings(&rng), delivered: Self.crossings(&rng))
                let moved = Self.record(history.read, history.delivered)
                records[slot].readPosition = moved.readPosition
                records[slot].readTime = moved.readTime
                records[slot].deliveredPosition = moved.deliveredPosition
                records[slot].deliveredTime = moved.deliveredTime
                store.store(history, for: &records[slot], slot: Int32(slot))
                model[slot] = history
            }
            mostCompact = max(mostCompact, records.filter { $0.history.compactIndex != nil }.count)
            if round % 1_000 == 0 {
                for i in records.indices where store.history(of: records[i], slot: Int32(i)) != model[i] {
                    Issue.record("seed \(seed) round \(round) slot \(i): \(store.history(of: records[i], slot: Int32(i))) != \(model[i])")
                    return
                }
                let kept = model.indices.filter { model[$0] != WatermarkHistory(implied: records[$0]) }.count
                #expect(store.count == kept)
            }
        }
        // Freed places were taken again: never more than the most held at once.
        #expect(store.compactPlaces <= mostCompact)
        #expect(records.contains { $0.history == .whole } && records.contains { $0.history.compactIndex != nil })
    }
}
