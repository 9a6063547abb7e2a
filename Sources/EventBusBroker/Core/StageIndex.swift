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

    /// The SEQs of `stages` (every SEQ when nil) from `seq` on, in order: see ``Candidates``.
    func candidates(in stages: [String]?, from seq: UInt64) -> Candidates {
        guard let stages else { return Candidates(every: seq) }
        return Candidates(lists: stages.compactMap { stage in
            lists[stage].map { list in (list.seqs, list.position(atOrAfter: seq)) }
        })
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

extension StageIndex {
    /// The SEQs of a consumer's stages from one SEQ on, in order, for its delivery to take one
    /// after another: one binary search per stage when made, then a step per SEQ (a search per
    /// SEQ cost about a cache miss each on a long log). For every stage (no list), each SEQ in
    /// turn, unbounded: the caller stops at the last committed one.
    ///
    /// It holds the lists as they were when made: make one per delivery round, never across an
    /// append.
    struct Candidates {
        private var lists: [(seqs: [UInt64], position: Int)]
        private var every: UInt64?

        init(lists: [(seqs: [UInt64], position: Int)]) {
            self.lists = lists
        }

        init(every seq: UInt64) {
            lists = []
            every = seq
        }

        /// The next SEQ, without taking it.
        func peek() -> UInt64? {
            if let every { return every }
            return head()?.seq
        }

        /// Takes the next SEQ; nil when the stages have no more.
        mutating func next() -> UInt64? {
            if let seq = every {
                every = seq + 1
                return seq
            }
            guard let (list, seq) = head() else { return nil }
            lists[list].position += 1
            return seq
        }

        /// The list whose next SEQ is the lowest, and that SEQ.
        private func head() -> (list: Int, seq: UInt64)? {
            var best: (list: Int, seq: UInt64)?
            for list in lists.indices where lists[list].position < lists[list].seqs.count {
                let seq = lists[list].seqs[lists[list].position]
                if seq < best?.seq ?? .max { best = (list, seq) }
            }
            return best
        }
    }
}
