import Testing

@testable import NATS

/// ``SubscriptionReaper``'s order, as a value: libnats 3.4.1 crashes when a subscription is
/// destroyed while its reader thread may still be inside it, so the subscription is
/// unsubscribed first, the connection flushed (the reader is past every earlier message once
/// the answer is back), and only then destroyed; at once only when that is known.
@Suite struct SubscriptionReaperTests {
    @Test func anOpenConnectionIsUnsubscribedThenFlushedBeforeTheDestroy() {
        let steps = SubscriptionReaper.Plan.start(connectionClosed: false)
        #expect(steps == [.unsubscribe, .flush(timeoutMilliseconds: 5_000)])
        #expect(SubscriptionReaper.Plan.finish(flushed: true, connectionClosed: false) == .destroy(afterSeconds: 0))
    }

    @Test func aClosedConnectionNeedsNoFlushItsReaderIsJoined() {
        #expect(SubscriptionReaper.Plan.start(connectionClosed: true) == [.unsubscribe])
        #expect(SubscriptionReaper.Plan.finish(flushed: false, connectionClosed: true) == .destroy(afterSeconds: 0))
    }

    /// A flush that did not come back (reconnecting: the reader is not reading) proves
    /// nothing: the destroy waits out the grace period. A connection that closed during the
    /// flush has joined its reader: at once.
    @Test func aFlushThatFailedDelaysTheDestroyUnlessTheConnectionClosed() {
        #expect(SubscriptionReaper.Plan.finish(flushed: false, connectionClosed: false) == .destroy(afterSeconds: 1))
        #expect(SubscriptionReaper.Plan.finish(flushed: false, connectionClosed: true) == .destroy(afterSeconds: 0))
    }

    /// Every plan unsubscribes first and never destroys before its finish.
    @Test func everyPlanUnsubscribesFirstAndDestroysOnlyAtItsEnd() {
        for closed in [false, true] {
            let steps = SubscriptionReaper.Plan.start(connectionClosed: closed)
            #expect(steps.first == .unsubscribe)
            #expect(!steps.contains { if case .destroy = $0 { true } else { false } })
        }
    }
}
