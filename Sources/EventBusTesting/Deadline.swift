/// A test that ran past its deadline: it hangs, or a loaded machine starved it
/// for longer than any run should take.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    /// What ran (the test's name, by default).
    public let what: String
    /// How long it was given.
    public let limit: Duration

    public var description: String { "\(what) did not end within \(limit)" }
}

/// Runs `body` and returns what it returns, or throws ``DeadlineExceeded`` once
/// `limit` has passed first (`body` is then cancelled, and awaited).
///
/// The guard against a hang, in place of Swift Testing's `.timeLimit` trait:
/// that trait cancels the test's own task, and Swift 6.3's test cancellation
/// can then crash the whole test process (a CI run died in
/// `pthread_mutex_trylock` under Testing's `_cancel`), taking every other
/// test's report with it. Here only a child task is cancelled. The limit is a
/// hang guard, never a timing assertion: give it minutes, since every test of
/// a run starts at once and waits its turn for the few threads of the pool.
public func withDeadline<T: Sendable>(
    _ limit: Duration, _ what: String = #function, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)  // a deadline timer
            return nil
        }
        defer { group.cancelAll() }
        // The first child to end decides; nil is the timer's.
        guard let first = try await group.next(), let value = first else {
            throw DeadlineExceeded(what: what, limit: limit)
        }
        return value
    }
}
