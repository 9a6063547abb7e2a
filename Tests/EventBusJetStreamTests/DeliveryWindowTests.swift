import EventBusJetStream
import Testing

/// Cumulative EB1 ACKs over explicit JetStream acks.
@Suite struct DeliveryWindowTests {
    @Test func ackTakesEverythingUpToItsSeq() {
        var window = DeliveryWindow<String>(credit: 10)
        let sent = [window.deliver(3, "a"), window.deliver(5, "b"), window.deliver(9, "c")]
        #expect(sent == [true, true, true])
        let none = window.acknowledge(upTo: 2)
        #expect(none.isEmpty)
        let two = window.acknowledge(upTo: 6)
        #expect(two == ["a", "b"])
        #expect(window.seqs == [9])
        let rest = window.acknowledge(upTo: 100)
        #expect(rest == ["c"])
        #expect(window.count == 0)
    }

    @Test func aRedeliveryOfAHeldEventIsNotSentTwice() {
        var window = DeliveryWindow<String>(credit: 10)
        let sent = [window.deliver(4, "first"), window.deliver(6, "x"), window.deliver(4, "again")]
        #expect(sent == [true, true, false])
        let drained = window.drain()
        #expect(drained == ["again", "x"])
        #expect(window.count == 0)
    }
}
