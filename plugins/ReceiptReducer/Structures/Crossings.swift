/// When one watermark passed each message: its last ``capacity`` forward
/// moves still in effect (docs/events.md rule 13).
///
/// Entries are (position, time), positions increasing, the oldest first. An
/// entry says the watermark passed every message after the previous entry's
/// position, up to its own, at its time; the newest entry's position is the
/// watermark. A move forward appends an entry (and forgets the oldest when
/// there are ``capacity``); a move back to `c` (`notification.mark_unread`)
/// forgets the entries past `c`, but the first of them stays as an entry at `c`
/// with its time: the messages up to `c` were passed then and never unpassed.
/// Once the oldest is forgotten, the oldest kept entry also stands for the
/// messages before it: the watermark had passed them by its time.
///
/// Inline, no heap: 40 bytes (positions, times, count).
struct Crossings: Sendable {
    /// Forward moves remembered per watermark.
    static let capacity = 3

    private var positions = InlineArray<3, Int32>(repeating: -1)
    /// Entries held, 0…``capacity`` (a byte, in the positions' padding).
    private var held: UInt8 = 0
    private var times = InlineArray<3, Int64>(repeating: 0)

    /// Entries held, 0…``capacity``.
    var count: Int { Int(held) }

    /// No entry: a watermark before the first message.
    init() {}

    /// One entry, `(position, time)`, or none for position -1: a watermark
    /// whose one remembered move is its last.
    init(position: Int32, time: Int64) {
        if position >= 0 { append(position, time) }
    }

    /// The entries, oldest first.
    var entries: [(position: Int32, time: Int64)] {
        (0..<count).map { (positions[$0], times[$0]) }
    }

    /// Entry `i` (0 the oldest, below ``count``), without building ``entries``.
    func entry(_ i: Int) -> (position: Int32, time: Int64) {
        (positions[i], times[i])
    }

    /// The watermark moved forward to `position` (past every entry) at `time`.
    mutating func append(_ position: Int32, _ time: Int64) {
        if count == Self.capacity {
            for i in 1..<count {
                positions[i - 1] = positions[i]
                times[i - 1] = times[i]
            }
            held -= 1
        }
        positions[count] = position
        times[count] = time
        held += 1
    }

    /// The time the watermark passed the message at `position`: that of the
    /// first entry at or after it; `nil` when the watermark is before it.
    func time(passing position: Int32) -> Int64? {
        for i in 0..<count where positions[i] >= position { return times[i] }
        return nil
    }
}

extension Crossings: Equatable {
    static func == (a: Crossings, b: Crossings) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where a.positions[i] != b.positions[i] || a.times[i] != b.times[i] { return false }
        return true
    }
}
