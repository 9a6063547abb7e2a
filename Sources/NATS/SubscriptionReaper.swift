import CNATS
import Dispatch

/// Frees libnats subscriptions only once libnats's reader thread cannot be inside one.
///
/// libnats 3.4.1 (Debian's) has a race that 3.6.1 fixed (nats.c issue 637): the thread that
/// reads the socket looks a message's subscription up, lets go of the connection's lock and
/// then locks the subscription, without holding a reference to it. A `natsSubscription_Destroy`
/// on another thread in between frees what the reader is about to lock, and the process dies
/// in `pthread_mutex_trylock`. A late message is common for a pull consumer: the server's
/// answer to a fetch that timed out on our side comes just after the timeout, as the consumer
/// is being dropped.
///
/// So a subscription is first unsubscribed (the reader no longer finds it), then the
/// connection flushed: the server's answer to the flush is read by that same reader after
/// every message that came before it, so once it is back the reader is past any message for
/// this subscription. Only then is the subscription destroyed. The flush is a round trip, so
/// this runs off the caller's thread; a closed connection needs none (closing joins the reader).
///
/// The order is a value, ``Plan``, tested without a connection; ``destroy(_:of:)`` carries it out.
enum SubscriptionReaper {
    /// One step of a reaping before its destroy.
    enum Step: Equatable {
        /// `natsSubscription_Unsubscribe`: the reader no longer finds the subscription.
        case unsubscribe
        /// `natsConnection_FlushTimeout`: once its answer is back, the reader is past every
        /// message that came before it.
        case flush(timeoutMilliseconds: Int64)
    }

    /// The steps of one reaping, given what the connection says as they run.
    enum Plan {
        /// How long the flush may wait for the server's answer.
        static let flushTimeoutMilliseconds: Int64 = 5_000
        /// How long a destroy waits when no round trip was possible: the reader is not reading
        /// (reconnecting), and whatever message it was in the middle of takes microseconds.
        static let graceSeconds = 1

        /// The steps before the destroy: unsubscribe always comes first, and a closed
        /// connection (its reader joined) needs no flush.
        static func steps(connectionClosed: Bool) -> [Step] {
            connectionClosed ? [.unsubscribe] : [.unsubscribe, .flush(timeoutMilliseconds: flushTimeoutMilliseconds)]
        }

        /// The seconds the destroy that ends the steps waits: none when the reader is known to
        /// be past the subscription (the flush came back, or the connection is closed, before
        /// or after it), otherwise the grace period.
        static func destroyDelay(flushed: Bool, connectionClosed: Bool) -> Int {
            flushed || connectionClosed ? 0 : graceSeconds
        }
    }

    /// Unsubscribes and destroys `handle`, a subscription of `connection`, in the background.
    ///
    /// For a JetStream subscription bound to an existing consumer only (as ``PullConsumer``'s
    /// are): libnats deletes a consumer it created itself when such a subscription is unsubscribed.
    static func destroy(_ handle: OpaquePointer, of connection: Connection) {
        let subscription = Handle(pointer: handle)
        DispatchQueue.global(qos: .utility).async {
            var flushed = false
            for step in Plan.steps(connectionClosed: connection.isClosed) {
                switch step {
                case .unsubscribe:
                    _ = natsSubscription_Unsubscribe(subscription.pointer)
                case .flush(let timeout):
                    flushed = natsConnection_FlushTimeout(connection.handle, timeout) == NATS_OK
                }
            }
            let seconds = Plan.destroyDelay(flushed: flushed, connectionClosed: connection.isClosed)
            if seconds == 0 {
                natsSubscription_Destroy(subscription.pointer)
                return
            }
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .seconds(seconds)) {
                natsSubscription_Destroy(subscription.pointer)
                withExtendedLifetime(connection) {}
            }
        }
    }

    /// A subscription's pointer on its way to another thread: nothing else holds it any more.
    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }
}
