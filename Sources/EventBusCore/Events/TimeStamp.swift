#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `time` a front door gives an event published to `in` without one: the broker and
/// the JetStream gateway stamp it alike, so that every stage and every replay reads the
/// same time (docs/protocol.md, PUB, "Time stamp").
package enum TimeStamp {
    /// Milliseconds since 1970 (UTC).
    package static func wallMilliseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000 + UInt64(ts.tv_nsec) / 1_000_000
    }

    /// `milliseconds` since 1970 as RFC 3339 UTC with three fraction digits: `2026-11-22T03:10:00.123Z`.
    package static func rfc3339(_ milliseconds: UInt64) -> String {
        var seconds = time_t(milliseconds / 1_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))."
            + "\(pad(Int32(milliseconds % 1_000), 3))Z"
    }

    /// `frame` with `"time":"…",` inserted as its first member (it is a valid JSON object).
    package static func stamping(_ frame: [UInt8], time: String) -> [UInt8] {
        guard let brace = frame.firstIndex(of: UInt8(ascii: "{")) else { return frame }
        var stamped = [UInt8]()
        stamped.reserveCapacity(frame.count + 40)
        stamped.append(contentsOf: frame[...brace])
        stamped.append(contentsOf: #""time":"\#(time)","#.utf8)
        stamped.append(contentsOf: frame[(brace + 1)...])
        return stamped
    }
}
