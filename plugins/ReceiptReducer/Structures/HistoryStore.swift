/// A channel's ``WatermarkHistory`` for each record that needs one
/// (``ChannelState/histories``), about 24 bytes each.
///
/// A record whose crossings are just its watermarks' last moves has none
/// (``Reference/none``): most members pay nothing. The others are kept as a
/// ``CompactHistory`` in an array, the record holding its index
/// (``MemberState/history``), with freed places taken again; a history
/// without a compact form, rare, is kept whole in a map by slot
/// (``Reference/whole``). A `[slot: WatermarkHistory]` map took about 170
/// bytes a record (80-byte values at most three quarters full).
struct HistoryStore: Sendable {
    /// Where a record's history is: 24 bits in the record.
    struct Reference: RawRepresentable, Sendable, Equatable {
        let rawValue: UInt32
        init(rawValue: UInt32) { self.rawValue = rawValue & 0xFF_FFFF }

        /// The record implies its history (``WatermarkHistory/init(implied:)``).
        static let none = Reference(rawValue: 0)
        /// In the map of whole histories.
        static let whole = Reference(rawValue: 0xFF_FFFF)
        /// The largest compact index plus one.
        static let compactLimit = 0xFF_FFFE

        init(compact index: Int) { self.init(rawValue: UInt32(index + 1)) }
        /// The index in the compact array, if the history is there.
        var compactIndex: Int? { self == .none || self == .whole ? nil : Int(rawValue) - 1 }
    }

    private var compact: [CompactHistory] = []
    private var free: [Int] = []
    private var whole: [Int32: WatermarkHistory] = [:]
    /// Records with a history.
    private(set) var count = 0
    /// Whether no record has one.
    var isEmpty: Bool { count == 0 }
    /// Places in the compact array, taken or free.
    var compactPlaces: Int { compact.count }

    /// An empty store.
    init() {}

    /// The history of `record`, in `slot`.
    func history(of record: MemberState, slot: Int32) -> WatermarkHistory {
        switch record.history {
        case .none: WatermarkHistory(implied: record)
        case .whole: whole[slot]!
        case let reference: compact[reference.compactIndex!].history(record: record)
        }
    }

    /// Keeps `history` for `record` (its watermarks already moved), in `slot`:
    /// nothing if the record implies it.
    mutating func store(_ history: WatermarkHistory, for record: inout MemberState, slot: Int32) {
        guard history != WatermarkHistory(implied: record) else {
            remove(for: &record, slot: slot)
            return
        }
        if let form = CompactHistory(history, record: record) {
            if let index = record.history.compactIndex {
                compact[index] = form
                return
            }
            let index: Int
            if let reused = free.popLast() {
                index = reused
                compact[index] = form
            } else if compact.count < Reference.compactLimit {
                index = compact.count
                compact.append(form)
            } else {
                keepWhole(history, for: &record, slot: slot)
                return
            }
            if record.history == .none { count += 1 } else { whole[slot] = nil }
            record.history = Reference(compact: index)
            return
        }
        keepWhole(history, for: &record, slot: slot)
    }

    private mutating func keepWhole(_ history: WatermarkHistory, for record: inout MemberState, slot: Int32) {
        if let index = record.history.compactIndex {
            free.append(index)
        } else if record.history == .none {
            count += 1
        }
        whole[slot] = history
        record.history = .whole
    }

    /// Drops the history of `record`, in `slot`: it implies its history again.
    mutating func remove(for record: inout MemberState, slot: Int32) {
        switch record.history {
        case .none: return
        case .whole: whole[slot] = nil
        case let reference: free.append(reference.compactIndex!)
        }
        count -= 1
        record.history = .none
    }
}
