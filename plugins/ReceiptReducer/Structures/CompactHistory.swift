/// A ``WatermarkHistory`` in 24 bytes, relative to its record
/// (``HistoryStore``): each watermark's newest crossing is the record's own
/// position and time, so only the (at most two) older crossings of each are
/// kept, each as its distance to the next newer one — in messages (16 bits)
/// and in milliseconds (32 bits, about 49 days). A history that does not fit
/// (crossings further apart, a time going back, a newest crossing that is
/// not the record's watermark) has no compact form.
struct CompactHistory: Sendable {
    /// Older crossings per watermark (``Crossings/capacity`` less the newest).
    private static let older = Crossings.capacity - 1

    /// Messages from each older crossing to the next newer one, 0 for none:
    /// the read watermark's (the newer first), then the delivered one's.
    private var steps = InlineArray<4, UInt16>(repeating: 0)
    /// Milliseconds from each older crossing to the next newer one.
    private var lapses = InlineArray<4, UInt32>(repeating: 0)

    /// `history` relative to `record`, or `nil` if it does not fit.
    init?(_ history: WatermarkHistory, record: MemberState) {
        guard Self.encode(history.read, record.readPosition, record.readTime, into: &self, at: 0),
            Self.encode(history.delivered, record.deliveredPosition, record.deliveredTime, into: &self, at: Self.older)
        else { return nil }
    }

    /// The history this is, relative to `record`.
    func history(record: MemberState) -> WatermarkHistory {
        WatermarkHistory(
            read: crossings(record.readPosition, record.readTime, at: 0),
            delivered: crossings(record.deliveredPosition, record.deliveredTime, at: Self.older))
    }

    private static func encode(
        _ crossings: Crossings, _ position: Int32, _ time: Int64, into compact: inout CompactHistory, at base: Int
    ) -> Bool {
        let count = crossings.count
        guard position >= 0 else { return count == 0 }
        guard count >= 1, count - 1 <= older else { return false }
        var newer = crossings.entry(count - 1)
        guard newer.position == position, newer.time == time else { return false }
        for k in 0..<(count - 1) {
            let entry = crossings.entry(count - 2 - k)
            let step = Int64(newer.position) - Int64(entry.position)
            let (lapse, overflow) = newer.time.subtractingReportingOverflow(entry.time)
            guard (1...Int64(UInt16.max)).contains(step), !overflow, (0...Int64(UInt32.max)).contains(lapse) else {
                return false
            }
            compact.steps[base + k] = UInt16(step)
            compact.lapses[base + k] = UInt32(lapse)
            newer = entry
        }
        return true
    }

    private func crossings(_ position: Int32, _ time: Int64, at base: Int) -> Crossings {
        guard position >= 0 else { return Crossings() }
        // Oldest first: walk back to the oldest kept crossing, then append forward.
        var held = 0
        var oldest = (position: position, time: time)
        while held < Self.older, steps[base + held] != 0 {
            oldest = (oldest.position - Int32(steps[base + held]), oldest.time - Int64(lapses[base + held]))
            held += 1
        }
        var crossings = Crossings()
        crossings.append(oldest.position, oldest.time)
        var entry = oldest
        for k in stride(from: held - 1, through: 0, by: -1) {
            entry = (entry.position + Int32(steps[base + k]), entry.time + Int64(lapses[base + k]))
            crossings.append(entry.position, entry.time)
        }
        return crossings
    }
}
