import EventBus
import EventBusJetStream
import Testing

/// The confirms' state machine, fed by hand.
@Suite struct ConfirmQueueTests {
    let alice: [UInt8] = [1], bob: [UInt8] = [2]
    let start = ContinuousClock.now

    @Test func aBatchIsConfirmedOnceEveryEventIsAcked() {
        var queue = ConfirmQueue()
        let tickets = queue.enqueue(peer: alice, correlation: Array("b1".utf8), count: 3, compact: false, deadline: start + .seconds(5))
        #expect(queue.eventsInFlight == 3)
        let answers1 = queue.complete(tickets[1], .success(42))
        #expect(answers1.isEmpty)
        let answers2 = queue.complete(tickets[0], .success(41))
        #expect(answers2.isEmpty)
        let replies = queue.complete(tickets[2], .success(41))
        #expect(replies == [ConfirmQueue.Reply(peer: alice, correlation: Array("b1".utf8), outcome: .confirmed([41, 42, 41], compact: false))])
        #expect(queue.eventsInFlight == 0)
        #expect(queue.batchCount == 0)
    }

    @Test func answersKeepEachPeersOrder() {
        var queue = ConfirmQueue()
        let first = queue.enqueue(peer: alice, correlation: [1], count: 1, compact: true, deadline: start + .seconds(5))
        let second = queue.enqueue(peer: alice, correlation: [2], count: 1, compact: true, deadline: start + .seconds(5))
        let other = queue.enqueue(peer: bob, correlation: [3], count: 1, compact: false, deadline: start + .seconds(5))
        // The second PUB's ack first: it waits for the first; bob's goes at once.
        let answers3 = queue.complete(second[0], .success(2))
        #expect(answers3.isEmpty)
        let answers4 = queue.complete(other[0], .success(3))
        #expect(answers4.map(\.correlation) == [[3]])
        let released = queue.complete(first[0], .success(1))
        #expect(released.map(\.correlation) == [[1], [2]])
        #expect(released.map(\.outcome) == [.confirmed([1], compact: true), .confirmed([2], compact: true)])
    }

    @Test func oneFailedEventFailsItsBatchAndLateAcksAreIgnored() {
        var queue = ConfirmQueue()
        let tickets = queue.enqueue(peer: alice, correlation: [9], count: 3, compact: false, deadline: start + .seconds(5))
        let answers5 = queue.complete(tickets[0], .success(1))
        #expect(answers5.isEmpty)
        let busy = BusError(.busy, "event 1: no")
        let replies = queue.complete(tickets[1], .failure(busy))
        #expect(replies == [ConfirmQueue.Reply(peer: alice, correlation: [9], outcome: .failed(busy))])
        #expect(queue.eventsInFlight == 0)
        let answers6 = queue.complete(tickets[2], .success(3))
        #expect(answers6.isEmpty)
        let answers7 = queue.complete(tickets[2], .failure(busy))
        #expect(answers7.isEmpty)
        #expect(queue.eventsInFlight == 0)
    }

    @Test func aBatchPastItsDeadlineIsBusyAndReleasesTheNextOnes() {
        var queue = ConfirmQueue()
        let slow = queue.enqueue(peer: alice, correlation: [1], count: 2, compact: false, deadline: start + .seconds(1))
        let fast = queue.enqueue(peer: alice, correlation: [2], count: 1, compact: false, deadline: start + .seconds(9))
        let answers8 = queue.complete(slow[0], .success(1))
        #expect(answers8.isEmpty)
        let answers9 = queue.complete(fast[0], .success(3))
        #expect(answers9.isEmpty)
        #expect(queue.nextDeadline == start + .seconds(1))
        let answers10 = queue.expire(now: start + .milliseconds(999)) { _ in BusError(.busy, "late") }
        #expect(answers10.isEmpty)
        let replies = queue.expire(now: start + .seconds(1)) { position in BusError(.busy, "event \(position): late") }
        #expect(replies.map(\.outcome) == [.failed(BusError(.busy, "event 1: late")), .confirmed([3], compact: false)])
        #expect(queue.eventsInFlight == 0)
        #expect(queue.nextDeadline == nil)
        // The ack that comes after the answer changes nothing.
        let answers11 = queue.complete(slow[1], .success(2))
        #expect(answers11.isEmpty)
    }

    @Test func aRepeatWithinABatchGetsTheFirstOnesSeq() {
        var queue = ConfirmQueue()
        let tickets = queue.enqueue(peer: alice, correlation: [5], count: 2, answers: [0, 1, 0], compact: false,
                                    deadline: start + .seconds(5))
        #expect(tickets.count == 2)
        _ = queue.complete(tickets[0], .success(7))
        let answers = queue.complete(tickets[1], .success(8))
        #expect(answers.map(\.outcome) == [.confirmed([7, 8, 7], compact: false)])
    }
}
