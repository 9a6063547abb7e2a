#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import EventBus

/// Wall-clock and monotonic time in milliseconds.
enum Clock {
    /// Milliseconds since 1970 (UTC).
    static func wallMilliseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000 + UInt64(ts.tv_nsec) / 1_000_000
    }

    /// Milliseconds on a clock that never goes back.
    static func monotonicMilliseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000 + UInt64(ts.tv_nsec) / 1_000_000
    }

    /// Nanoseconds on the same clock as ``monotonicMilliseconds()``.
    static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// `milliseconds` since 1970 as RFC 3339 UTC with three fraction digits: `2026-11-22T03:10:00.123Z`.
    static func rfc3339(_ milliseconds: UInt64) -> String { TimeStamp.rfc3339(milliseconds) }
}
