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
enum SubscriptionReaper {
    /// Unsubscribes and destroys `handle`, a subscription of `connection`, in the background.
    ///
    /// For a JetStream subscription bound to an existing consumer only (as ``PullConsumer``'s
    /// are): libnats deletes a consumer it created itself when such a subscription is unsubscribed.
    static func destroy(_ handle: OpaquePointer, of connection: Connection) {
        let subscription = Handle(pointer: handle)
        DispatchQueue.global(qos: .utility).async {
            _ = natsSubscription_Unsubscribe(subscription.pointer)
            let readerIsPast = connection.isClosed || natsConnection_FlushTimeout(connection.handle, 5_000) == NATS_OK
                || connection.isClosed
            if readerIsPast {
                natsSubscription_Destroy(subscription.pointer)
                return
            }
            // No round trip now (reconnecting): the reader is not reading. Whatever message it
            // may have been in the middle of takes microseconds; give it a second.
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + 1) {
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
