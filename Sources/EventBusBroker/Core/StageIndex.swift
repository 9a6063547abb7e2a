/// For each stage, the SEQs of its events in order.
///
/// Lets a consumer of one stage skip the rest of the log, and gives exact
/// per-stage counts and lags by binary search instead of a scan.
struct StageIndex {
    private struct List {
        var seqs: [UInt64] = []
        var start = 0

        var count: Int { seqs.count - start }

        /// The position of the first SEQ ≥ `seq`.
        func position(atOrAfter seq: UInt64) -> Int {
            var low = start, high = seqs.count
            while low < high {
                let mid = (low + high) / 2
                if seqs[mid] < seq { low = mid + 1 } else { high = mid }
            }
            return low
        }
    }

    private var lists: [String: List] = [:]

    /// The stages that have events, in no order.
    var stages: [String] { Array(lists.keys) }

    mutating func append(stage: String, seq: UInt64) {
        lists[stage, default: List()].seqs.append(seq)
    }

    /// Appends a run of SEQs of one stage, in order: one lookup for the run.
    mutating func append(stage: String, seqs: some Sequence<UInt64>) {
        lists[stage, default: List()].seqs.append(contentsOf: seqs)
    }

    /// The first SEQ of `stage` at or after `seq`.
    func next(in stage: String, atOrAfter seq: UInt64) -> UInt64? {
        guard let list = lists[stage] else { return nil }
        let position = list.position(atOrAfter: seq)
        return position < list.seqs.count ? list.seqs[position] : nil
    }

    /// The number of events of `stage` retained.
    func count(in stage: String) -> Int { lists[stage]?.count ?? 0 }

    /// The number of events of `stage` with a SEQ above `seq`.
    func count(in stage: String, after seq: UInt64) -> Int {
        guard let list = lists[stage] else { return 0 }
        return list.seqs.count - list.position(atOrAfter: seq &+ 1)
    }

    /// Forgets SEQs below `seq` (after retention removed them from the log).
    mutating func trim(below seq: UInt64) {
        for (stage, var list) in lists {
            list.start = list.position(atOrAfter: seq)
            if list.start > 4096 && list.start * 2 > list.seqs.count {
                list.seqs.removeFirst(list.start)
                list.start = 0
            }
            lists[stage] = list
        }
    }
}
