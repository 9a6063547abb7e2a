/// A fixed pool of durable-consumer names for replays.
///
/// The broker never deletes a consumer's offset, so the gateway reuses a few names
/// (`<consumer>.replay-0` …) instead of minting one per reconnect; a replay waits
/// while every name is in use.
public actor ReplayNames {
    private var free: [String]
    private var waiters: [CheckedContinuation<String, Never>] = []

    /// Creates a pool of `count` names derived from `consumer`.
    public init(consumer: String, count: Int) {
        free = (0..<max(count, 1)).reversed().map { "\(consumer).replay-\($0)" }
    }

    /// Takes a name, waiting for one to be released if needed.
    public func acquire() async -> String {
        if let name = free.popLast() { return name }
        return await withCheckedContinuation { waiters.append($0) }
    }

    /// Gives a name back.
    public func release(_ name: String) {
        if waiters.isEmpty {
            free.append(name)
        } else {
            waiters.removeFirst().resume(returning: name)
        }
    }
}
