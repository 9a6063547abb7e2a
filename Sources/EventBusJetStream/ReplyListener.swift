import Foundation
import NATS
import Synchronization

/// The answers to this gateway's REQs: a core NATS subscription on its own subject
/// (`eventbus.replies.<gateway>`), read on a thread of its own and handed to the loop's
/// inbox.
///
/// A REQ's `query` event names its gateway in its token (`<gateway>.<n>`); whichever
/// gateway stores the `reply` (or the unanswered `query`) at `out` publishes it to that
/// subject once JetStream has acked it. A gateway that dies between the two loses the
/// answer, and the REQ times out, as a REQ does when the broker restarts.
final class ReplyListener: Sendable {
    /// The subject whose messages answer the REQs of the gateway `prefix`.
    static func subject(gateway prefix: String) -> String { "eventbus.replies.\(prefix)" }

    private let subscription: Subscription
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(connection: Connection, gateway prefix: String, inbox: GatewayInbox) throws(NATSError) {
        subscription = try connection.subscribe(Self.subject(gateway: prefix))
        let thread = Thread { [self] in
            while !stopped.load(ordering: .acquiring) {
                do throws(NATSError) {
                    if let message = try subscription.next(timeout: .milliseconds(200)) { inbox.post(.replied(message.payload)) }
                } catch {
                    if stopped.load(ordering: .acquiring) { break }
                    inbox.post(.replyListenerFailed(error))
                    Thread.sleep(forTimeInterval: 0.2)  // a failed read (connection lost): retried after a pause
                }
            }
            finished.signal()
        }
        thread.name = "eventbus-gateway-replies"
        thread.start()
    }

    /// Ends the thread and the subscription; returns once the thread has ended.
    func stop() {
        stopped.store(true, ordering: .releasing)
        finished.wait()
        try? subscription.unsubscribe()
    }
}
