import CZeroMQ
import Testing
@testable import ZeroMQ

@Suite struct SocketTests {
    let context: Context
    init() throws { context = try Context() }

    @Test func multipartMessageArrivesWholeAndInOrder() throws {
        let a = try Socket(context: context, type: .pair)
        let b = try Socket(context: context, type: .pair)
        try a.bind("inproc://multipart")
        try b.connect("inproc://multipart")
        let frames: [[UInt8]] = [Array("EB1".utf8), [], [0, 1, 2, 255], Array(repeating: 7, count: 100_000)]
        #expect(try a.send(frames))
        #expect(try b.receive() == frames)
    }

    /// Frames from different places arrive as one message; a full queue can refuse only the
    /// first frame (nothing sent), and a later refusal is an error, never a partial message.
    @Test func aMessageSentFrameByFrameArrivesWholeAndARefusalIsAtItsStart() throws {
        let a = try Socket(context: context, type: .pair)
        let b = try Socket(context: context, type: .pair)
        try a.bind("inproc://frame-by-frame")
        try b.connect("inproc://frame-by-frame")
        let parts: [[UInt8]] = [Array("topic".utf8), [0, 0, 0, 0, 0, 0, 0, 9], Array("event".utf8)]
        var mores: [Bool] = []
        #expect(try a.sendMessage(count: 3) { index, more throws(ZMQError) in
            mores.append(more)
            return try a.sendFrame(parts[index], more: more)
        })
        #expect(mores == [true, true, false])
        #expect(try b.receive() == parts)
        #expect(try a.sendMessage(count: 2) { _, _ in false } == false)
        #expect(throws: ZMQError.self) {
            _ = try a.sendMessage(count: 2) { index, _ in index == 0 }
        }
    }

    @Test func receiveWithoutWaitingReturnsNilWhenNothingIsQueued() throws {
        let a = try Socket(context: context, type: .pull)
        try a.bind("inproc://empty")
        #expect(try a.receive(dontWait: true) == nil)
        #expect(try a.canReceive == false)
    }

    @Test func routerAddressesEachDealerByRoutingID() throws {
        let router = try Socket(context: context, type: .router)
        try router.bind("inproc://router")
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.setRoutingID(Array("peer-1".utf8))
        try dealer.connect("inproc://router")
        try dealer.send([Array("hello".utf8)])
        let request = try #require(try router.receive())
        #expect(request == [Array("peer-1".utf8), Array("hello".utf8)])
        try router.send([request[0], Array("world".utf8)])
        #expect(try dealer.receive() == [Array("world".utf8)])
    }

    @Test func routerMandatoryRefusesUnknownPeer() throws {
        let router = try Socket(context: context, type: .router)
        try router.setRouterMandatory(true)
        try router.bind("inproc://mandatory")
        #expect(throws: ZMQError.self) { try router.send([Array("nobody".utf8), [1]]) }
    }

    @Test func subscriberGetsOnlyMatchingPrefixes() throws {
        let pub = try Socket(context: context, type: .xpub)
        try pub.bind("inproc://stream")
        let sub = try Socket(context: context, type: .sub)
        try sub.connect("inproc://stream")
        try sub.subscribe(Array("out/".utf8))
        // XPUB hands the subscription up as a message: 1 then the prefix.
        #expect(try pub.receive() == [[1] + Array("out/".utf8)])
        try pub.send([Array("in/x/message.new".utf8), [1]])
        try pub.send([Array("out/x/message.new".utf8), [2]])
        try sub.setReceiveTimeout(1_000)
        #expect(try sub.receive() == [Array("out/x/message.new".utf8), [2]])
    }

    @Test func pollerReportsTheReadySocket() throws {
        let a = try Socket(context: context, type: .pair)
        let b = try Socket(context: context, type: .pair)
        try a.bind("inproc://poll")
        try b.connect("inproc://poll")
        var poller = Poller()
        poller.add(b)
        #expect(try poller.poll(timeoutMilliseconds: 0) == [[]])
        try a.send([[42]])
        #expect(try poller.poll(timeoutMilliseconds: 1_000) == [.readable])
    }

    @Test func bindingAnEphemeralTCPPortReportsTheChosenEndpoint() throws {
        let s = try Socket(context: context, type: .router)
        try s.bind("tcp://127.0.0.1:*")
        let endpoint = try s.lastEndpoint
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
        #expect(Int(endpoint.split(separator: ":").last ?? "") ?? 0 > 0)
    }

    @Test func badEndpointIsATypedError() throws {
        let s = try Socket(context: context, type: .router)
        let error = try #require(throws: ZMQError.self) { try s.bind("nonsense://x") }
        #expect(error.operation.contains("zmq_bind"))
        #expect(!error.message.isEmpty)
    }

    @Test func closedSocketRefusesUse() throws {
        let s = try Socket(context: context, type: .pair)
        s.close()
        #expect(throws: ZMQError.self) { try s.send([[1]]) }
    }

    @Test func highWaterMarkMakesNonBlockingSendReportFull() throws {
        let push = try Socket(context: context, type: .push)
        try push.setSendHighWaterMark(1)
        try push.bind("inproc://hwm")
        let pull = try Socket(context: context, type: .pull)
        try pull.setReceiveHighWaterMark(1)
        try pull.connect("inproc://hwm")
        var accepted = 0
        for _ in 0..<100 where try push.send([[1]], dontWait: true) { accepted += 1 }
        #expect(accepted >= 1 && accepted < 100)
    }
}

@Suite struct KeepingOnlyTests {
    @Test func receiveKeepingOnlyCountsFramesAndCopiesOne() throws {
        let context = try Context()
        let a = try Socket(context: context, type: .pair)
        let b = try Socket(context: context, type: .pair)
        try a.bind("inproc://keeping")
        try b.connect("inproc://keeping")
        try a.send([[1], [2, 2], [3, 3, 3]])
        let received = try #require(try b.receive(keepingOnly: 1))
        #expect(received.frames == 3)
        #expect(received.kept == [2, 2])
    }
}
