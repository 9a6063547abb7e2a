import Foundation
import ServiceLifecycle

/// A blocking run loop as a swift-service-lifecycle `Service`: `run` on a thread of its
/// own (named, for debuggers and `top -H`), `stop` on graceful shutdown and on
/// cancellation; the service ends when `run` returns or throws.
///
/// Cancellation matters as much as graceful shutdown: when another service of the group
/// fails, the group cancels the rest, and a loop that ignored it would keep the process
/// alive forever with the failure never reported (a plugin whose runner failed at start
/// while its lease kept renewing hung that way on a JetStream cluster).
///
/// The broker, the supervisor and each plugin runner are loops that own their sockets and
/// block in `poll`; this is the one bridge from such a loop to Swift concurrency.
public struct BlockingService: Service {
    /// The thread's name.
    public let name: String
    private let body: @Sendable () throws -> Void
    private let stop: @Sendable () -> Void

    /// Wraps a loop.
    ///
    /// - Parameters:
    ///   - name: The thread's name, such as `eventbus.broker`.
    ///   - run: The loop; returns after `stop` asked it to, or throws.
    ///   - stop: Asks `run` to return; safe from any thread, may be called more than once.
    public init(name: String, run: @escaping @Sendable () throws -> Void, stop: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = run
        self.stop = stop
    }

    public func run() async throws {
        let (body, name) = (self.body, self.name)
        try await withGracefulShutdownHandler {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let thread = Thread {
                        do {
                            try body()
                            continuation.resume()
                        } catch {
                            continuation.resume(throwing: error)
                        }
                    }
                    thread.name = name
                    thread.start()
                }
            } onCancel: { [stop] in
                stop()
            }
        } onGracefulShutdown: { [stop] in
            stop()
        }
    }
}
