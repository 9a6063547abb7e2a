import EventBusJetStream
import Testing

/// Cumulative EB1 ACKs over explicit JetStream acks, and the order deliveries keep to
/// become EVTs: no SEQ left out when a delivery is lost on its way.
@Suite struct DeliveryWindowTests {
    /// A consumer made at `first` for the window.
    func made(at first: UInt64, credit: Int = 10) -> DeliveryWindow<String> {
        var window = DeliveryWindow<String>(credit: credit)
        window.started(first: first, made: true)
        return window
    }

    @Test func ackTakesEverythingUpToItsSeq() {
        var window = made(at: 3)
        // Every delivery came (consumer sequences 1, 2, 3): the SEQs skipped are not the consumer's.
        let sent = [window.arrive(3, delivery: 1, redelivered: false, forClient: true, "a"),
                    window.arrive(5, delivery: 2, redelivered: false, forClient: true, "b"),
                    window.arrive(9, delivery: 3, redelivered: false, forClient: true, "c")]
        #expect(sent == [.send, .send, .send])
        let none = window.acknowledge(upTo: 2)
        #expect(none.isEmpty)
        let two = window.acknowledge(upTo: 6)
        #expect(two == ["a", "b"])
        #expect(window.seqs == [9])
        let rest = window.acknowledge(upTo: 100)
        #expect(rest == ["c"])
        #expect(window.count == 0)
    }

    /// Only EVTs held since before the previous round are marked in progress: one acked
    /// within a round never is, one held on is, each round.
    @Test func onlyEventsHeldSinceBeforeTheLastRoundAreStale() {
        var window = made(at: 1)
        #expect(window.arrive(1, delivery: 1, redelivered: false, forClient: true, "a") == .send)
        #expect(window.arrive(2, delivery: 2, redelivered: false, forClient: true, "b") == .send)
        let first = window.staleHandles()
        #expect(first.isEmpty)  // sent in this round
        #expect(window.arrive(3, delivery: 3, redelivered: false, forClient: true, "c") == .send)
        _ = window.acknowledge(upTo: 1)
        let second = window.staleHandles()
        #expect(second == ["b"])  // "a" was acked; "c" came in this round
        let third = window.staleHandles()
        #expect(third == ["b", "c"])
        // A redelivery of a held EVT keeps its round and gives its newer handle.
        #expect(window.arrive(2, delivery: 4, redelivered: true, forClient: true, "b2") == .held)
        let fourth = window.staleHandles()
        #expect(fourth == ["b2", "c"])
        _ = window.acknowledge(upTo: 3)
        let none = window.staleHandles()
        #expect(none.isEmpty)
    }

    /// docs/protocol.md "ACK": an ACK beyond every SEQ sent or passed over skips ahead; one
    /// of a SEQ sent, or of one passed over (another prefix), does not.
    @Test func onlyAnAckBeyondEverySeqSentSkipsAhead() {
        var window = DeliveryWindow<Int>(credit: 10)
        window.started(first: 1, made: true)
        #expect(window.arrive(1, delivery: 1, redelivered: false, forClient: true, 1) == .send)
        #expect(window.arrive(2, delivery: 2, redelivered: false, forClient: false, 2) == .pass)
        #expect(!window.skipsAhead(1) && !window.skipsAhead(2))
        #expect(window.acknowledge(upTo: 3) == [1])
        #expect(window.skipsAhead(3))
        // The window moves on when the consumer made again after 3 starts.
        window.started(first: 4, made: true)
        #expect(window.next == 4 && !window.skipsAhead(3))
        #expect(window.arrive(4, delivery: 1, redelivered: false, forClient: true, 4) == .send)
    }

    @Test func aRedeliveryOfAHeldEventIsNotSentTwice() {
        var window = made(at: 4)
        let sent = [window.arrive(4, delivery: 1, redelivered: false, forClient: true, "first"),
                    window.arrive(6, delivery: 2, redelivered: false, forClient: true, "x"),
                    window.arrive(4, delivery: 3, redelivered: true, forClient: true, "again")]
        #expect(sent == [.send, .send, .held])
        let drained = window.drain()
        #expect(drained == ["again", "x"])
        #expect(window.count == 0)
    }

    @Test func aRedeliveryOfAnAckedOrPassedSeqIsAckedAgain() {
        var window = made(at: 1)
        #expect(window.arrive(1, delivery: 1, redelivered: false, forClient: true, "a") == .send)
        #expect(window.arrive(2, delivery: 2, redelivered: false, forClient: false, "other prefix") == .pass)
        #expect(window.next == 3)
        _ = window.acknowledge(upTo: 1)
        #expect(window.arrive(1, delivery: 3, redelivered: true, forClient: true, "a again") == .repeated)
        #expect(window.arrive(2, delivery: 4, redelivered: true, forClient: false, "passed again") == .repeated)
        #expect(window.arrive(3, delivery: 5, redelivered: false, forClient: true, "b") == .send)
    }

    /// The campaign's finding: consumer sequences 5,281–5,440 lost with the consumer's
    /// leader, the next delivery SEQ 5,441. Sent, the plugin folded its input without 160
    /// events; the redeliveries 30 s later were dropped as SEQs below the last sent.
    @Test func aDeliveryLostOnItsWayIsAGapNotSent() {
        var window = made(at: 1)
        #expect(window.arrive(1, delivery: 1, redelivered: false, forClient: true, "a") == .send)
        #expect(window.arrive(2, delivery: 2, redelivered: false, forClient: true, "b") == .send)
        // Consumer sequence 3 (SEQ 3) never came.
        #expect(window.arrive(4, delivery: 4, redelivered: false, forClient: true, "d") == .gap(restartAt: 1))
        #expect(window.seqs == [1, 2])
        _ = window.acknowledge(upTo: 1)
        // Made again where the client's unacked EVTs start: SEQ 2 again, then SEQ 3 at last.
        #expect(window.arrive(5, delivery: 5, redelivered: false, forClient: true, "e") == .gap(restartAt: 2))
        window.started(first: 2, made: true)
        #expect(window.next == 3)
        let again = [window.arrive(2, delivery: 1, redelivered: false, forClient: true, "b, new handle"),
                     window.arrive(3, delivery: 2, redelivered: false, forClient: true, "c"),
                     window.arrive(4, delivery: 3, redelivered: false, forClient: true, "d")]
        #expect(again == [.held, .send, .send])
        #expect(window.acknowledge(upTo: 4) == ["b, new handle", "c", "d"])
    }

    @Test func aLaterRedeliveryIsAGapEvenWithNoDeliveryMissing() {
        var window = made(at: 1)
        #expect(window.arrive(1, delivery: 1, redelivered: false, forClient: true, "a") == .send)
        // SEQ 2 went to a fetch of an earlier attachment: it comes again, after SEQ 3.
        #expect(window.arrive(3, delivery: 2, redelivered: true, forClient: true, "c") == .gap(restartAt: 1))
    }

    /// `resume` binds the consumer as it was: its earlier deliveries went to another client,
    /// so a SEQ past the one due cannot be trusted until the consumer is made again.
    @Test func aConsumerBoundAsItWasTrustsNoSkippedSeq() {
        var window = DeliveryWindow<String>(credit: 10)
        window.started(first: 10, made: false)
        #expect(window.arrive(12, delivery: 57, redelivered: false, forClient: true, "l") == .gap(restartAt: 10))
        #expect(window.arrive(10, delivery: 58, redelivered: false, forClient: true, "j") == .send)
        #expect(window.arrive(11, delivery: 59, redelivered: false, forClient: true, "k") == .send)
    }

    /// A new consumer leader may number from an older state: the deliveries it repeats were
    /// seen, so SEQs it then skips are still not the consumer's.
    @Test func aConsumerSequenceThatGoesBackKeepsTheTrust() {
        var window = made(at: 1)
        for seq in UInt64(1)...3 {
            #expect(window.arrive(seq, delivery: seq, redelivered: false, forClient: true, "\(seq)") == .send)
        }
        #expect(window.arrive(2, delivery: 2, redelivered: false, forClient: true, "2'") == .held)
        #expect(window.arrive(3, delivery: 3, redelivered: false, forClient: true, "3'") == .held)
        #expect(window.arrive(4, delivery: 4, redelivered: false, forClient: true, "4") == .send)
        #expect(window.arrive(6, delivery: 5, redelivered: false, forClient: true, "6") == .send)
        #expect(window.seqs == [1, 2, 3, 4, 6])
    }
}
