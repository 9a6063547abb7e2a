/// How often refused connections are logged: the first at once, then at most one line per
/// interval that counts what it stands for, so that a flood of unknown keys cannot flood the
/// log (nor slow the broker's loop with writes).
///
/// A value with no I/O: the caller asks it and logs what it says.
struct RefusalLog: Sendable, Equatable {
    /// A line to write: how many refusals it stands for, and the address of the last.
    struct Line: Sendable, Equatable {
        let count: Int
        let lastAddress: String
    }

    /// The shortest time between two lines, in milliseconds.
    let intervalMilliseconds: UInt64
    private var lastLine: UInt64?
    private var held = 0
    private var heldAddress = ""

    init(intervalMilliseconds: UInt64 = 10_000) {
        self.intervalMilliseconds = intervalMilliseconds
    }

    /// A connection from `address` was refused at `now`: the line to log now, if any.
    mutating func refused(address: String, now: UInt64) -> Line? {
        held += 1
        heldAddress = address
        return due(now: now)
    }

    /// Called from time to time: the line of refusals held back, once the interval has passed.
    mutating func tick(now: UInt64) -> Line? {
        held > 0 ? due(now: now) : nil
    }

    private mutating func due(now: UInt64) -> Line? {
        if let lastLine, now &- lastLine < intervalMilliseconds { return nil }
        let line = Line(count: held, lastAddress: heldAddress)
        lastLine = now
        held = 0
        return line
    }
}
