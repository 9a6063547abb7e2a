import Foundation

/// Runs CPU-bound test work on a thread of its own, one such body at a time, and awaits it
/// without holding a thread of Swift's cooperative pool.
///
/// Swift Testing runs tests as tasks on that pool, which has one thread per core. A test
/// that computes for minutes on it holds its thread all that time; two at once on a
/// 2-core machine held both, and every test waiting on a process, a socket or a timer
/// meanwhile (the JetStream suites) could not resume: four of them failed their
/// deadlines in the CI of 0ebd0f5. Off the pool but all at once (eight batches on eight
/// threads), they took the cores from the broker processes of other tests instead (the
/// CI of 7f472c4). One at a time, they use one core and leave the other.
///
/// The body must not use `#expect`: it runs outside the test's task, so it returns what
/// the test then checks.
enum OwnThread {
    private static let turn = NSLock()

    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                turn.lock()
                let result = body()
                turn.unlock()
                continuation.resume(returning: result)
            }
            thread.name = "cpu-bound test"
            thread.stackSize = 16 << 20
            thread.start()
        }
    }
}
