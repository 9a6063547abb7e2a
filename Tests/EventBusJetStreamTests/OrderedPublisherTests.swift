import EventBus
import EventBusJetStream
import Testing

/// The ordered publisher's state machine, fed by hand.
@Suite struct OrderedPublisherTests {
    let alice: [UInt8] = [1], bob: [UInt8] = [2]
    let start = ContinuousClock.now

    func confirmed(_ actions: [OrderedPublisher.Action]) -> [[UInt64]] {
        actions.compactMap { if case .reply(let reply) = $0, case .confirmed(let seqs, _) = reply.outcome { return seqs } else { return nil } }
    }

    func busy(_ actions: [OrderedPublisher.Action]) -> [[UInt8]] {
        actions.compactMap { if case .reply(let reply) = $0, case .failed(let error) = reply.outcome, error.code == .busy { return reply.correlation } else { return nil } }
    }

    @Test func aPeersPubsGoOneAtATimeAndAreAnsweredFromTheCommitAck() {
        var publisher = OrderedPublisher(timeout: .seconds(5))
        let (first, sent1) = publisher.enqueue(peer: alice, correlation: [1], compact: false, messageIDs: ["a", "b", "c"],
                                               answers: [0, 1, 2, 1], now: start)
        #expect(sent1 == [.sendBatch(job: first!, attempt: 1, messages: [0, 1, 2])])
        let (second, sent2) = publisher.enqueue(peer: alice, correlation: [2], compact: false, messageIDs: ["d"], answers: [0], now: start)
        #expect(sent2.isEmpty)  // waits for the first
        // Another peer is not held up.
        let (_, other) = publisher.enqueue(peer: bob, correlation: [3], compact: false, messageIDs: ["x"], answers: [0], now: start)
        #expect(other.count == 1)
        #expect(publisher.eventsInFlight == 5)
        let done = publisher.batchResult(job: first!, attempt: 1, .stored(lastSequence: 12), now: start)
        #expect(confirmed(done) == [[10, 11, 12, 11]])
        #expect(done.last == .sendBatch(job: second!, attempt: 1, messages: [0]))
    }

    @Test func aFailureTakesTheQueuedPubsAndFencesThePeerUntilTheResend() {
        var publisher = OrderedPublisher(timeout: .seconds(5), fenceDuration: .seconds(30))
        let (first, _) = publisher.enqueue(peer: alice, correlation: [1], compact: false, messageIDs: ["a"], answers: [0], now: start)
        _ = publisher.enqueue(peer: alice, correlation: [2], compact: false, messageIDs: ["b"], answers: [0], now: start)
        let failed = publisher.batchResult(job: first!, attempt: 1, .failed("timeout"), now: start)
        #expect(busy(failed) == [[1], [2]])
        #expect(publisher.jobCount == 0)
        // A later PUB that is not the resend is refused at once, nothing sent.
        let (none, refused) = publisher.enqueue(peer: alice, correlation: [3], compact: false, messageIDs: ["c"], answers: [0], now: start)
        #expect(none == nil && busy(refused) == [[3]])
        // The resend lifts the fence; then the rest goes in order.
        let (again, resent) = publisher.enqueue(peer: alice, correlation: [4], compact: false, messageIDs: ["a"], answers: [0], now: start)
        #expect(resent == [.sendBatch(job: again!, attempt: 1, messages: [0])])
        let (_, queued) = publisher.enqueue(peer: alice, correlation: [5], compact: false, messageIDs: ["b"], answers: [0], now: start)
        #expect(queued.isEmpty)
        #expect(publisher.jobCount == 2)
    }

    @Test func theDeadlineAnswersBusyAndALateAckIsIgnored() {
        var publisher = OrderedPublisher(timeout: .seconds(5))
        let (job, _) = publisher.enqueue(peer: alice, correlation: [1], compact: false, messageIDs: ["a"], answers: [0], now: start)
        #expect(publisher.tick(now: start + .seconds(4)).isEmpty)
        #expect(busy(publisher.tick(now: start + .seconds(5))) == [[1]])
        #expect(publisher.batchResult(job: job!, attempt: 1, .stored(lastSequence: 1), now: start + .seconds(6)).isEmpty)
    }

    @Test func aRetryableRefusalIsSentAgainAfterTheDelay() {
        var publisher = OrderedPublisher(timeout: .seconds(5), retryDelay: .milliseconds(20))
        let (job, _) = publisher.enqueue(peer: alice, correlation: [1], compact: false, messageIDs: ["a", "b"], answers: [0, 1], now: start)
        #expect(publisher.batchResult(job: job!, attempt: 1, .retryable("leader changed"), now: start).isEmpty)
        #expect(publisher.tick(now: start + .milliseconds(10)).isEmpty)
        #expect(publisher.tick(now: start + .milliseconds(20)) == [.sendBatch(job: job!, attempt: 2, messages: [0, 1])])
        #expect(confirmed(publisher.batchResult(job: job!, attempt: 2, .stored(lastSequence: 8), now: start)) == [[7, 8]])
    }

    @Test func aDuplicateInTheBatchSendsTheMessagesOneAtATime() {
        var publisher = OrderedPublisher(timeout: .seconds(5))
        let (job, _) = publisher.enqueue(peer: alice, correlation: [1], compact: false, messageIDs: ["old", "new"],
                                         answers: [0, 1, 1], now: start)
        #expect(publisher.batchResult(job: job!, attempt: 1, .duplicate, now: start) == [.sendBatch(job: job!, attempt: 2, messages: [0])])
        #expect(publisher.batchResult(job: job!, attempt: 2, .stored(lastSequence: 3), now: start) == [.sendBatch(job: job!, attempt: 3, messages: [1])])
        #expect(confirmed(publisher.batchResult(job: job!, attempt: 3, .stored(lastSequence: 9), now: start)) == [[3, 9, 9]])
    }
}
