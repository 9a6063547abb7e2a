import Testing

@testable import NATS

/// ``SubscriptionReaper``'s order, as a value: libnats 3.4.1 crashes when a subscription is
/// destroyed while its reader thread may still be inside it, so the subscription is
/// unsubscribed first, the connection flushed (the reader is past every earlier message once
/// the answer is back), and only then destroyed; at once only when that is known.
@Suite struct SubscriptionReaperTests {
    @Test func anOpenConnectionIsUnsubscribedThenFlushedBeforeTheDestroy() {
        #expect(SubscriptionReaper.Plan.steps(connectionClosed: false) == [.unsubscribe, .flush(timeoutMilliseconds: 5_000)])
        #expect(SubscriptionReaper.Plan.destroyDelay(flushed: true, connectionClosed: false) == 0)
    }

    @Test func aClosedConnectionNeedsNoFlushItsReaderIsJoined() {
        #expect(SubscriptionReaper.Plan.steps(connectionClosed: true) == [.unsubscribe])
        #expect(SubscriptionReaper.Plan.destroyDelay(flushed: false, connectionClosed: true) == 0)
    }

    /// A flush that did not come back (reconnecting: the reader is not reading) proves
    /// nothing: the destroy waits out the grace period. A connection that closed during the
    /// flush has joined its reader: at once.
    @Test func aFlushThatFailedDelaysTheDestroyUnlessTheConnectionClosed() {
        #expect(SubscriptionReaper.Plan.destroyDelay(flushed: false, connectionClosed: false) == 1)
        #expect(SubscriptionReaper.Plan.destroyDelay(flushed: false, connectionClosed: true) == 0)
    }
}
