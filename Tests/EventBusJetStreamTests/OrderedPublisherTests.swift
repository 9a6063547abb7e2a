import EventBus
import EventBusJetStream
import Testing

/// The ordered publisher's state machine, fed by hand.
@Suite struct OrderedPublisherTests {
    typealias Part = OrderedPublisher.Part
    let alice: [UInt8] = [1], bob: [UInt8] = [2]
    let start = ContinuousClock.now

    func confirmed(_ actions: [OrderedPublisher.Action]) -> [[UInt64]] {
        actions.compactMap { if case .reply(let reply) = $0, case .confirmed(let seqs, _) = reply.outcome { return seqs } else { return nil } }
    }

    func busy(_ actions: [OrderedPublisher.Action]) -> [[UInt8]] {
        actions.compactMap { if case .reply(let reply) = $0, case .failed(let error) = reply.outcome, error.code == .busy { return reply.correlation } else { return nil } }
    }

    func parts(_ job: UInt64?, _ messages: Range<Int>) -> [Part] { messages.map { Part(job: job!, message: $0) } }

    @Test func thePubsQueuedBehindABatchGoTogetherInTheNextAndAreAnsweredFromItsCommitAck() {
        var publisher = OrderedPublisher(timeout: .seconds(5))
        let (first, sent1) = publisher.enqueue(peer: alice, correlation: [1], compact: false, stream: "in", messageIDs: ["a", "b", "c"],
                                               answers: [0, 1, 2, 1], now: start)
        #expect(sent1 == [.sendBatch(flight: first!, attempt: 1, parts: parts(first, 0..<3))])
        let (second, sent2) = publisher.enqueue(peer: alice, correlation: [2], compact: false, stream: "in", messageIDs: ["d"], answers: [0], now: start)
        let (third, sent3) = publisher.enqueue(peer: alice, correlation: [3], compact: false, stream: "in", messageIDs: ["e", "f"], answers: [0, 1], now: start)
        #expect(sent2.isEmpty && sent3.isEmpty)  // wait for the first
        // Another peer is not held up.
        let (_, other) = publisher.enqueue(peer: bob, correlation: [9], compact: false, stream: "in", messageIDs: ["x"], answers: [0], now: start)
        #expect(other.count == 1)
        #expect(publisher.eventsInFlight == 7)
        let done = publisher.batchResult(flight: first!, attempt: 1, .stored(lastSequence: 12), now: start)
        #expect(confirmed(done) == [[10, 11, 12, 11]])
        // Both queued PUBs in one batch, in order.
        #expect(done.last == .sendBatch(flight: second!, attempt: 1, parts: parts(second, 0..<1) + parts(third, 0..<2)))
        #expect(publisher.parts(of: second!, attempt: 1) == parts(second, 0..<1) + parts(third, 0..<2))
        let both = publisher.batchResult(flight: second!, attempt: 1, .stored(lastSequence: 20), now: start)
        #expect(confirmed(both) == [[18], [19, 20]])
        #expect(publisher.flightsStarted == 3 && publisher.pubsInFlights == 4)
        #expect(publisher.eventsInFlight == 1)
    }

    @Test func aBatchEndsAtAnotherStreamAtItsLimitsAndAtAnIdItHoldsAlready() {
        var publisher = OrderedPublisher(timeout: .seconds(5), maxBatchMessages: 4, maxBatchBytes: 100)
        let (head, _) = publisher.enqueue(peer: alice, correlation: [0], compact: false, stream: "in", messageIDs: ["h"], answers: [0], now: start)
        let (a, _) = publisher.enqueue(peer: alice, correlation: [1], compact: false, stream: "in", messageIDs: ["a", "b"], bytes: 10, answers: [0, 1], now: start)
        let (b, _) = publisher.enqueue(peer: alice, correlation: [2], compact: false, stream: "in", messageIDs: ["c"], bytes: 10, answers: [0], now: start)
        let (c, _) = publisher.enqueue(peer: alice, correlation: [3], compact: false, stream: "in", messageIDs: ["d", "e"], bytes: 10, answers: [0, 1], now: start)
        // Five messages would pass the limit of four: a and b only.
        var next = publisher.batchResult(flight: head!, attempt: 1, .stored(lastSequence: 1), now: start)
        #expect(next.last == .sendBatch(flight: a!, attempt: 1, parts: parts(a, 0..<2) + parts(b, 0..<1)))
        let (d, _) = publisher.enqueue(peer: alice, correlation: [4], compact: false, stream: "out", messageIDs: ["f"], bytes: 10, answers: [0], now: start)
        next = publisher.batchResult(flight: a!, attempt: 1, .stored(lastSequence: 4), now: start)
        #expect(next.last == .sendBatch(flight: c!, attempt: 1, parts: parts(c, 0..<2)))  // d is another stream's
        let (e, _) = publisher.enqueue(peer: alice, correlation: [5], compact: false, stream: "out", messageIDs: ["g"], bytes: 95, answers: [0], now: start)
        next = publisher.batchResult(flight: c!, attempt: 1, .stored(lastSequence: 6), now: start)
        #expect(next.last == .sendBatch(flight: d!, attempt: 1, parts: parts(d, 0..<1)))  // 105 bytes would pass 100
        let (f, _) = publisher.enqueue(peer: alice, correlation: [6], compact: false, stream: "out", messageIDs: ["z"], answers: [0], now: start)
        let (g, _) = publisher.enqueue(peer: alice, correlation: [7], compact: false, stream: "out", messageIDs: ["z"], answers: [0], now: start)
        next = publisher.batchResult(flight: d!, attempt: 1, .stored(lastSequence: 1), now: start)
        #expect(next.last == .sendBatch(flight: e!, attempt: 1, parts: parts(e, 0..<1) + parts(f, 0..<1)))  // g repeats z
        next = publisher.batchResult(flight: e!, attempt: 1, .stored(lastSequence: 3), now: start)
        #expect(confirmed(next) == [[2], [3]])
        #expect(next.last == .sendBatch(flight: g!, attempt: 1, parts: parts(g, 0..<1)))
    }

    @Test func aFailureTakesTheBatchAndTheQueuedPubsAndFencesThePeerUntilTheResend() {
        var publisher = OrderedPublisher(timeout: .seconds(5), fenceDuration: .seconds(30))
        let (first, _) = publisher.enqueue(peer: alice, correlation: [1], compact: false, stream: "in", messageIDs: ["a"], answers: [0], now: start)
        _ = publisher.enqueue(peer: alice, correlation: [2], compact: false, stream: "in", messageIDs: ["b"], answers: [0], now: start)
        _ = publisher.enqueue(peer: alice, correlation: [3], compact: false, stream: "in", messageIDs: ["c"], answers: [0], now: start)
        let next = publisher.batchResult(flight: first!, attempt: 1, .stored(lastSequence: 1), now: start)
        guard case .sendBatch(let flight, _, let sent) = next.last else { Issue.record("no batch"); return }
        #expect(sent.count == 2)
        _ = publisher.enqueue(peer: alice, correlation: [4], compact: false, stream: "in", messageIDs: ["d"], answers: [0], now: start)
        let failed = publisher.batchResult(flight: flight, attempt: 1, .failed("timeout"), now: start)
        #expect(busy(failed) == [[2], [3], [4]])
        #expect(publisher.jobCount == 0 && publisher.eventsInFlight == 0)
        // A later PUB that is not the resend is refused at once, nothing sent.
        let (none, refused) = publisher.enqueue(peer: alice, correlation: [5], compact: false, stream: "in", messageIDs: ["c"], answers: [0], now: start)
        #expect(none == nil && busy(refused) == [[5]])
        // The resend lifts the fence; then the rest goes in order.
        let (again, resent) = publisher.enqueue(peer: alice, correlation: [6], compact: false, stream: "in", messageIDs: ["b"], answers: [0], now: start)
        #expect(resent == [.sendBatch(flight: again!, attempt: 1, parts: parts(again, 0..<1))])
        let (_, queued) = publisher.enqueue(peer: alice, correlation: [7], compact: false, stream: "in", messageIDs: ["c"], answers: [0], now: start)
        #expect(queued.isEmpty)
        #expect(publisher.jobCount == 2)
    }

    @Test func theFenceEndsAfterItsDuration() {
        var publisher = OrderedPublisher(timeout: .seconds(5), fenceDuration: .seconds(30))
        let (first, _) = publisher.enqueue(peer: alice, correlation: [1], compact: false, messageIDs: ["a"], answers: [0], now: start)
        _ = publisher.batchResult(flight: first!, attempt: 1, .failed("refused"), now: start)
        #expect(busy(publisher.enqueue(peer: alice, correlation: [2], compact: false, messageIDs: ["b"], answers: [0], now: start + .seconds(29)).1) == [[2]])
        #expect(publisher.enqueue(peer: alice, correlation: [3], compact: false, messageIDs: ["b"], answers: [0], now: start + .seconds(30)).0 != nil)
    }

    @Test func theDeadlineAnswersBusyAndALateAckIsIgnored() {
        var publisher = OrderedPublisher(timeout: .seconds(5))
        let (job, _) = publisher.enqueue(peer: alice, correlation: [1], compact: false, messageIDs: ["a"], answers: [0], now: start)
        _ = publisher.enqueue(peer: alice, correlation: [2], compact: false, messageIDs: ["b"], answers: [0], now: start + .seconds(3))
        #expect(publisher.nextWakeup == start + .seconds(5))
        #expect(publisher.tick(now: start + .seconds(4)).isEmpty)
        #expect(busy(publisher.tick(now: start + .seconds(5))) == [[1], [2]])
        #expect(publisher.batchResult(flight: job!, attempt: 1, .stored(lastSequence: 1), now: start + .seconds(6)).isEmpty)
        #expect(publisher.nextWakeup == nil)
    }

    @Test func aRetryableRefusalSendsTheSameBatchAgainAfterTheDelay() {
        var publisher = OrderedPublisher(timeout: .seconds(5), retryDelay: .milliseconds(20))
        let (job, _) = publisher.enqueue(peer: alice, correlation: [1], compact: false, messageIDs: ["a", "b"], answers: [0, 1], now: start)
        #expect(publisher.batchResult(flight: job!, attempt: 1, .retryable("leader changed"), now: start).isEmpty)
        #expect(publisher.parts(of: job!, attempt: 1) == nil)  // not awaited while it waits
        #expect(publisher.tick(now: start + .milliseconds(10)).isEmpty)
        #expect(publisher.tick(now: start + .milliseconds(20)) == [.sendBatch(flight: job!, attempt: 2, parts: parts(job, 0..<2))])
        #expect(publisher.batchResult(flight: job!, attempt: 1, .stored(lastSequence: 2), now: start).isEmpty)  // the old attempt
        #expect(confirmed(publisher.batchResult(flight: job!, attempt: 2, .stored(lastSequence: 8), now: start)) == [[7, 8]])
    }

    @Test func aDuplicateInTheBatchSendsItsMessagesOneAtATimeAcrossItsPubs() {
        var publisher = OrderedPublisher(timeout: .seconds(5))
        let (head, _) = publisher.enqueue(peer: alice, correlation: [0], compact: false, messageIDs: ["h"], answers: [0], now: start)
        let (job, _) = publisher.enqueue(peer: alice, correlation: [1], compact: false, messageIDs: ["old", "new"],
                                         answers: [0, 1, 1], now: start)
        let (last, _) = publisher.enqueue(peer: alice, correlation: [2], compact: false, messageIDs: ["next"], answers: [0], now: start)
        _ = publisher.batchResult(flight: head!, attempt: 1, .stored(lastSequence: 1), now: start)
        #expect(publisher.batchResult(flight: job!, attempt: 1, .duplicate, now: start)
            == [.sendBatch(flight: job!, attempt: 2, parts: [Part(job: job!, message: 0)])])
        #expect(publisher.batchResult(flight: job!, attempt: 2, .stored(lastSequence: 1), now: start)
            == [.sendBatch(flight: job!, attempt: 3, parts: [Part(job: job!, message: 1)])])
        #expect(publisher.batchResult(flight: job!, attempt: 3, .stored(lastSequence: 9), now: start)
            == [.sendBatch(flight: job!, attempt: 4, parts: [Part(job: last!, message: 0)])])
        #expect(confirmed(publisher.batchResult(flight: job!, attempt: 4, .stored(lastSequence: 10), now: start)) == [[1, 9, 9], [10]])
    }

    @Test func aFailureHalfWayThroughSinglesConfirmsThePubsStoredWhole() {
        var publisher = OrderedPublisher(timeout: .seconds(5))
        let (head, _) = publisher.enqueue(peer: alice, correlation: [0], compact: false, messageIDs: ["h"], answers: [0], now: start)
        let (job, _) = publisher.enqueue(peer: alice, correlation: [1], compact: false, messageIDs: ["old"], answers: [0], now: start)
        _ = publisher.enqueue(peer: alice, correlation: [2], compact: false, messageIDs: ["x", "y"], answers: [0, 1], now: start)
        _ = publisher.enqueue(peer: alice, correlation: [3], compact: false, messageIDs: ["z"], answers: [0], now: start)
        _ = publisher.batchResult(flight: head!, attempt: 1, .stored(lastSequence: 1), now: start)
        _ = publisher.batchResult(flight: job!, attempt: 1, .duplicate, now: start)
        _ = publisher.batchResult(flight: job!, attempt: 2, .stored(lastSequence: 1), now: start)  // old
        _ = publisher.batchResult(flight: job!, attempt: 3, .stored(lastSequence: 5), now: start)  // x
        let failed = publisher.batchResult(flight: job!, attempt: 4, .failed("no quorum"), now: start)  // y
        #expect(confirmed(failed) == [[1]])
        #expect(busy(failed) == [[2], [3]])
        // Fenced on the first PUB not stored whole.
        #expect(busy(publisher.enqueue(peer: alice, correlation: [4], compact: false, messageIDs: ["z"], answers: [0], now: start).1) == [[4]])
        #expect(publisher.enqueue(peer: alice, correlation: [5], compact: false, messageIDs: ["x", "y"], answers: [0, 1], now: start).0 != nil)
    }
}
