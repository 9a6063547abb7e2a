import Foundation

/// The system's clocks with the wall clock moved by an offset read from a file: how the
/// fault campaign makes the broker's clock jump forwards and backwards while it runs
/// (docs/reliability.md, "The faults"), as NTP or an operator may make a real one jump.
/// `eventbus up` and `eventbus broker` use it when `EVENTBUS_CLOCK_SKEW_FILE` names a file
/// (``BrokerClocks/fromEnvironment()``); the monotonic clock, which every timer and timeout
/// uses, never moves.
///
/// The file holds the offset in milliseconds, a signed decimal (`-7200000`); a missing or
/// unreadable file is no offset. It is read again at most every ``rereadMilliseconds``.
final class SkewedClock: BrokerClock {
    /// The environment variable that names the offset's file.
    static let environmentVariable = "EVENTBUS_CLOCK_SKEW_FILE"

    let path: String
    let rereadMilliseconds: UInt64
    private var offset: Int64 = 0
    private var readAt: UInt64?

    init(path: String, rereadMilliseconds: UInt64 = 50) {
        self.path = path
        self.rereadMilliseconds = rereadMilliseconds
    }

    /// The offset in the file now (0 when there is none), read at most every ``rereadMilliseconds``.
    func currentOffset() -> Int64 {
        let now = Clock.monotonicMilliseconds()
        if readAt.map({ now - $0 >= rereadMilliseconds }) ?? true {
            readAt = now
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            offset = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        return offset
    }

    func wallMilliseconds() -> UInt64 {
        let wall = Int64(Clock.wallMilliseconds()) + currentOffset()
        return UInt64(max(0, wall))
    }

    func monotonicMilliseconds() -> UInt64 { Clock.monotonicMilliseconds() }
    func monotonicNanoseconds() -> UInt64 { Clock.monotonicNanoseconds() }
}

/// The clocks a broker process runs on.
enum BrokerClocks {
    /// ``SkewedClock`` when `EVENTBUS_CLOCK_SKEW_FILE` is set, else the system's clocks.
    static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> any BrokerClock {
        guard let path = environment[SkewedClock.environmentVariable], !path.isEmpty else { return SystemClock() }
        return SkewedClock(path: path)
    }
}
