/// When the next fsync may start while others are in flight: spread over the
/// time one fsync takes on this disk, so that the fsyncs in flight end one
/// after another instead of all at once.
///
/// Without it, fsyncs started back to back stay bunched: they end together, and
/// what arrives after them waits for the whole bunch, then its own fsync — two
/// fsyncs, as with one in flight. Spread `duration ÷ depth` apart, a confirm
/// waits at most that for the next start, then one fsync. The duration is an
/// average of the fsyncs measured (an exponential moving average, 1/8 per
/// sample), so the spacing follows the disk at hand: microseconds on a fast
/// disk (no wait at all, in effect), milliseconds on a slow one. A value,
/// tested without a disk.
struct SyncPacer: Equatable {
    /// How many fsyncs may be in flight.
    let depth: Int
    /// The average fsync, in nanoseconds; 0 until one was measured.
    private(set) var averageNanoseconds: UInt64 = 0
    /// When the last fsync started, on the core's monotonic clock.
    private(set) var lastStart: UInt64?

    init(depth: Int) {
        precondition(depth >= 1)
        self.depth = depth
    }

    /// The spacing between two starts while fsyncs are in flight.
    var spacingNanoseconds: UInt64 { averageNanoseconds / UInt64(depth) }

    /// Whether an fsync may start `now` with `inFlight` others running.
    func mayStart(now: UInt64, inFlight: Int) -> Bool {
        guard inFlight < depth else { return false }
        guard inFlight > 0, let lastStart else { return true }
        return now >= lastStart &+ spacingNanoseconds
    }

    /// Nanoseconds from `now` until ``mayStart(now:inFlight:)`` turns true by time
    /// alone, for a loop that has a group waiting; nil when time does not matter
    /// (nothing in flight: it may start now; all threads busy: an fsync's end decides).
    func delay(now: UInt64, inFlight: Int) -> UInt64? {
        guard inFlight > 0, inFlight < depth, let lastStart else { return nil }
        let due = lastStart &+ spacingNanoseconds
        return due > now ? due - now : 0
    }

    /// An fsync started `now`.
    mutating func started(now: UInt64) {
        lastStart = now
    }

    /// An fsync took `nanoseconds`.
    mutating func measured(nanoseconds: UInt64) {
        averageNanoseconds = averageNanoseconds == 0 ? nanoseconds : averageNanoseconds - averageNanoseconds / 8 + nanoseconds / 8
    }
}
