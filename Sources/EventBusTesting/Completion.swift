import Synchronization

/// A value that arrives once (a process's exit status, a thread's end), awaited with a
/// deadline by any number of tasks; no thread blocks while they wait.
final class Completion<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [Int: CheckedContinuation<Value?, Never>] = [:]
        var timers: [Int: Task<Void, Never>] = [:]
        var next = 0
    }

    private let state = Mutex(State())

    /// The value, once it arrived.
    var value: Value? { state.withLock { $0.value } }

    /// Sets the value (the first call only) and resumes every waiter.
    func complete(_ value: Value) {
        let (waiters, timers) = state.withLock { state -> ([CheckedContinuation<Value?, Never>], [Task<Void, Never>]) in
            guard state.value == nil else { return ([], []) }
            state.value = value
            defer { state.waiters = [:]; state.timers = [:] }
            return (Array(state.waiters.values), Array(state.timers.values))
        }
        for timer in timers { timer.cancel() }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    /// The value, as soon as it arrives; nil if it has not within `timeout`.
    func wait(timeout: Duration) async -> Value? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
            let registered = state.withLock { state -> Int? in
                guard state.value == nil else { return nil }
                let id = state.next
                state.next += 1
                state.waiters[id] = continuation
                return id
            }
            guard let id = registered else {
                continuation.resume(returning: value)
                return
            }
            let timer = Task { [self] in
                try? await Task.sleep(for: timeout)  // a deadline timer
                guard !Task.isCancelled else { return }
                let expired = state.withLock { state -> CheckedContinuation<Value?, Never>? in
                    state.timers[id] = nil
                    return state.waiters.removeValue(forKey: id)
                }
                expired?.resume(returning: nil)
            }
            let orphan = state.withLock { state -> Bool in
                guard state.waiters[id] != nil else { return true }
                state.timers[id] = timer
                return false
            }
            if orphan { timer.cancel() }
        }
    }
}
