/// The broker core's time, injected so that tests move it by hand: request
/// timeouts, dedup expiry and timers are then tested without waiting.
protocol BrokerClock: AnyObject {
    /// Milliseconds since 1970 (UTC): append timestamps, dedup ages, query times.
    func wallMilliseconds() -> UInt64
    /// Milliseconds on a clock that never goes back: timers and timeouts.
    func monotonicMilliseconds() -> UInt64
    /// Nanoseconds on the same clock as ``monotonicMilliseconds()``: durations measured.
    func monotonicNanoseconds() -> UInt64
}

/// The system's clocks (``Clock``).
final class SystemClock: BrokerClock {
    func wallMilliseconds() -> UInt64 { Clock.wallMilliseconds() }
    func monotonicMilliseconds() -> UInt64 { Clock.monotonicMilliseconds() }
    func monotonicNanoseconds() -> UInt64 { Clock.monotonicNanoseconds() }
}
