import EventBus
import Foundation
import Testing
import ZeroMQ

@testable import EventBusBroker

/// Every verb and error code of docs/protocol.md, and the commit rules, on the
/// broker core alone: plain frames in, plain frames out, time moved by hand.
/// No socket, no wait (the process-level tests prove the same over the wire).
@Suite struct BrokerCoreTests {
    static func event(_ id: String = UUID().uuidString, message: String = "m1") -> [UInt8] {
        Events.read(message: message, id: id)
    }

    // MARK: Framing (docs/protocol.md "Errors", checks 1 to 4)

    @Test func framingErrorsComeInTheirOrderWithTheirCodes() throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        let peer = Array("peer".utf8)
        bus.core.handle([peer, Array("EB2".utf8), Array("PING".utf8), Array("c1".utf8)])
        #expect(bus.reply()?.arguments.first == "bad_frame")
        bus.core.handle([peer, WireProtocol.signature, Array("PING".utf8)])
        #expect(bus.errorCode() == "bad_frame")
        bus.core.handle([peer, WireProtocol.signature, Array("PING".utf8), [UInt8](repeating: 97, count: 65)])
        let long = bus.reply()
        #expect(long?.arguments.first == "bad_frame")
        #expect(long?.correlation == "")  // it cannot echo a CORR it refused
        bus.send("FROB")
        #expect(bus.errorCode() == "bad_verb")
        bus.send("OK")
        #expect(bus.errorCode() == "bad_verb")
        bus.send("ping")
        #expect(bus.errorCode() == "bad_verb")
    }

    // MARK: PING, HELLO, STATS

    @Test func pingHelloAndStatsAnswerWithTheirCorrelation() throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        bus.send("PING", correlation: "p-1")
        let pong = bus.reply()
        #expect(pong?.verb == "OK")
        #expect(pong?.correlation == "p-1")

        bus.send("HELLO", [#"{"name":"t","batch":true,"compact_ok":true}"#])
        let hello = try JSONParser.parse(Array(try #require(bus.reply()?.frames.last)))
        #expect(hello["protocol"] == .string("EB1"))
        #expect(hello["batch"] == .bool(true))
        #expect(hello["compact_ok"] == .bool(true))

        bus.send("HELLO", ["[1]"])
        #expect(bus.errorCode() == "bad_args")
        bus.send("HELLO", ["{"])
        #expect(bus.errorCode() == "bad_json")
        bus.send("HELLO", [#"{"services":["Bad Name"]}"#])
        #expect(bus.errorCode() == "bad_args")
        bus.send("HELLO", [#"{"batch":"yes"}"#])
        #expect(bus.errorCode() == "bad_args")
        bus.send("HELLO")
        #expect(bus.errorCode() == "bad_frame")

        bus.send("PUB", [Array("in".utf8), Self.event()])
        try bus.pass()
        _ = bus.replies()
        bus.send("STATS")
        let stats = try JSONParser.parse(Array(try #require(bus.reply()?.frames.last)))
        #expect(stats["head_seq"] == .number("1"))
    }

    /// docs/protocol.md "Requests": frames after the last argument a verb uses are ignored
    /// (PUB and CONSUME read every frame after STAGE or CREDIT as events or prefixes).
    @Test func framesAfterTheLastArgumentAreIgnored() throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        bus.send("PING", ["extra"], correlation: "p")
        #expect(bus.reply()?.verb == "OK")
        bus.send("STATS", ["extra", "more"])
        #expect(bus.reply()?.verb == "OK")
        bus.send("PUB", [Array("in".utf8), Self.event("a")])
        try bus.pass()
        _ = bus.replies()
        bus.send("CONSUME", ["reader", "earliest", "10", "in/"])
        _ = bus.replies()
        try bus.pass()
        #expect(bus.replies().map(\.verb) == ["EVT"])
        bus.send("ACK", ["reader", "1", "extra"])
        #expect(bus.replies().isEmpty)  // accepted: an ACK has no reply
        #expect(bus.core.consumers["reader"]?.acked == 1)
        bus.send("CANCEL", ["reader", "extra"])
        #expect(bus.reply()?.verb == "OK")
        bus.send("REQ", ["receipts", #"{"method":"unread_counts","params":{}}"#, "extra"], correlation: "q")
        #expect(bus.replies().isEmpty)  // taken: the query waits for its answer
    }

    // MARK: PUB and PUBS

    @Test func aPubIsConfirmedWithItsSeqsOnlyByTheCommitThatCoversIt() throws {
        let bus = try CoreHarness { $0.fsync = .always }
        defer { bus.close() }
        bus.send("PUB", [Array("in".utf8), Self.event("a"), Self.event("b")], correlation: "p1")
        #expect(bus.core.log.headSeq == 2)
        #expect(bus.replies().isEmpty)  // appended, not yet durable
        try bus.pass()
        let ok = bus.reply()
        #expect(ok?.verb == "OK")
        #expect(ok?.correlation == "p1")
        #expect(ok?.arguments == ["1", "2"])
        #expect(bus.core.log.durableSeq == 2)
    }

    @Test func aDuplicateIsConfirmedWithTheOriginalSeqAndNotLoggedAgain() throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        bus.send("PUB", [Array("in".utf8), Self.event("same")])
        try bus.pass()
        #expect(bus.reply()?.arguments == ["1"])
        bus.send("PUB", [Array("in".utf8), Self.event("other"), Self.event("same")])
        try bus.pass()
        #expect(bus.reply()?.arguments == ["2", "1"])
        #expect(bus.core.log.headSeq == 2)
    }

    @Test func theDedupWindowForgetsAnIdentityOnceItIsOlderThanTheWindow() throws {
        let bus = try CoreHarness {
            $0.dedupWindowSeconds = 60
            $0.dedupMinimumIDs = 0
        }
        defer { bus.close() }
        bus.send("PUB", [Array("in".utf8), Self.event("once")])
        try bus.pass()
        #expect(bus.reply()?.arguments == ["1"])
        bus.clock.advance(milliseconds: 61_000)
        try bus.pass()  // the dedup timer expires what is older than the window
        bus.send("PUB", [Array("in".utf8), Self.event("once")])
        try bus.pass()
        #expect(bus.reply()?.arguments == ["2"])
    }

    @Test func aPubsBatchIsAnsweredAsThePubItStandsFor() throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        let batch = PublishBatch.encode([Self.event("x"), Self.event("y")])
        bus.send("PUBS", [Array("in".utf8), batch])
        try bus.pass()
        #expect(bus.reply()?.arguments == ["1", "2"])
    }

    @Test func eachRefusedPubLeavesTheLogAsItWas() throws {
        let bus = try CoreHarness { $0.maxEventBytes = 1_000 }
        defer { bus.close() }
        bus.send("PUB", ["in"])
        #expect(bus.errorCode() == "bad_frame")
        bus.send("PUB", [Array("nowhere".utf8), Self.event()])
        #expect(bus.errorCode() == "unknown_stage")
        bus.send("PUB", [Array("in".utf8), Array("{not json".utf8)])
        #expect(bus.errorCode() == "bad_json")
        bus.send("PUB", [Array("in".utf8), Events.make(type: "message.liked", subject: "messaging:general", data: #"{"cid":"messaging:general"}"#)])
        #expect(bus.errorCode() == "unknown_type")
        bus.send("PUB", [Array("in".utf8), Events.make(type: "message.read", subject: "messaging:other",
                                                       data: #"{"cid":"messaging:general","user_id":"u","message_id":"m"}"#)])
        #expect(bus.errorCode() == "bad_event")
        var large = Self.event()
        large.insert(contentsOf: Array(repeating: UInt8(ascii: " "), count: 1_000), at: 1)
        bus.send("PUB", [Array("in".utf8), Self.event(), large])
        #expect(bus.errorCode() == "too_large")
        bus.send("PUB", [Array("in".utf8)] + (0...WireProtocol.maxBatchEvents).map { Self.event("n\($0)") })
        #expect(bus.errorCode() == "too_large")
        try bus.pass()
        #expect(bus.core.log.headSeq == 0)
        #expect(bus.replies().isEmpty)
    }

    @Test func aLogThatCannotBeWrittenAnswersBusyAndAppendsNothing() throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        bus.core.log.failNextWriteAfterBytes = 10
        bus.send("PUB", [Array("in".utf8), Self.event("a"), Self.event("b")])
        #expect(bus.errorCode() == "busy")
        #expect(bus.core.log.headSeq == 0)
        bus.send("PUB", [Array("in".utf8), Self.event("a")])
        try bus.pass()
        #expect(bus.reply()?.arguments == ["1"])
    }

    /// Ordered publishing (docs/protocol.md): a peer that asked for it gets `busy` for every
    /// later PUB until it sends the refused one again, so a later PUB never lands before it
    /// (a plugin's output, refused while the disk was full, came after the next one).
    @Test func anOrderedPeersRefusedPubGoesBeforeAnyLaterOneSeed6225845571583603823() throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        bus.send("HELLO", [Array(#"{"name":"p","ordered":true}"#.utf8)], peer: "p")
        #expect(bus.reply()?.arguments.first?.contains(#""ordered":true"#) == true)
        bus.core.log.failNextWriteAfterBytes = 10
        bus.send("PUB", [Array("in".utf8), Self.event("a"), Self.event("b")], peer: "p")
        #expect(bus.errorCode() == "busy")
        // The disk has room again, but the next PUB is not the refused one: refused too.
        bus.send("PUB", [Array("in".utf8), Self.event("c")], peer: "p")
        #expect(bus.errorCode() == "busy")
        // Another peer is not held up.
        bus.send("PUB", [Array("in".utf8), Self.event("x")], peer: "q")
        try bus.pass()
        #expect(bus.reply()?.arguments == ["1"])
        // The refused PUB again, then the later one: in that order in the log.
        bus.send("PUB", [Array("in".utf8), Self.event("a"), Self.event("b")], peer: "p")
        bus.send("PUB", [Array("in".utf8), Self.event("c")], peer: "p")
        try bus.pass()
        #expect(bus.replies().map(\.arguments) == [["2", "3"], ["4"]])
    }

    /// docs/protocol.md, HELLO check order 5–7: an option that is not `true` or `false` is
    /// `bad_args` naming it.
    @Test(arguments: ["batch", "compact_ok", "ordered"])
    func aHelloOptionThatIsNotABooleanIsBadArgs(option: String) throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        bus.send("HELLO", [Array(#"{"name":"p","\#(option)":"yes"}"#.utf8)], peer: "p")
        let reply = try #require(bus.reply())
        #expect(reply.verb == "ERR")
        #expect(reply.arguments == ["bad_args", "frame 3: \(option) must be true or false"])
    }

    @Test func aPeerThatDidNotAskForOrderIsNotHeldUp() throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        bus.core.log.failNextWriteAfterBytes = 10
        bus.send("PUB", [Array("in".utf8), Self.event("a")], peer: "p")
        #expect(bus.errorCode() == "busy")
        bus.send("PUB", [Array("in".utf8), Self.event("c")], peer: "p")
        try bus.pass()
        #expect(bus.reply()?.arguments == ["1"])
    }

    // MARK: CONSUME, ACK, CANCEL

    @Test func aConsumerGetsCommittedEventsUpToItsCreditAndMoreAfterItsAck() throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        bus.send("CONSUME", ["reader", "earliest", "2", "in/"], peer: "r")
        #expect(bus.reply()?.arguments == ["1"])
        bus.send("PUB", [Array("in".utf8), Self.event("a"), Self.event("b"), Self.event("c")], peer: "w")
        #expect(bus.replies().isEmpty)
        try bus.pass()
        let sent = bus.replies()
        #expect(sent.filter { $0.peer == Array("w".utf8) }.map(\.verb) == ["OK"])
        let events = sent.filter { $0.peer == Array("r".utf8) }
        #expect(events.map(\.verb) == ["EVT", "EVT"])  // credit 2
        #expect(events.map { $0.arguments[0] } == ["1", "2"])  // frame 3 is the SEQ
        bus.send("ACK", ["reader", "2"], peer: "r")
        #expect(bus.replies().isEmpty)  // an ACK has no reply
        try bus.pass()
        #expect(bus.replies().map { $0.arguments[0] } == ["3"])
    }

    @Test func aFullPeerIsFedAgainOnceItsQueueHasRoom() throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        bus.send("CONSUME", ["reader", "earliest", "10", "in/"], peer: "r")
        _ = bus.replies()
        bus.output.fullPeers = [Array("r".utf8)]
        bus.send("PUB", [Array("in".utf8), Self.event()], peer: "w")
        try bus.pass()
        #expect(bus.replies().map(\.verb) == ["OK"])
        #expect(bus.core.consumersBlocked)
        bus.output.fullPeers = []
        try bus.pass()
        #expect(bus.replies().map(\.verb) == ["EVT"])
    }

    @Test func consumeAckAndCancelRefuseWhatIsMalformed() throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        bus.send("CONSUME", ["reader", "earliest", "10"])
        #expect(bus.errorCode() == "bad_args")  // no PREFIX
        bus.send("CONSUME", ["reader", "earliest", "0", "in/"])
        #expect(bus.errorCode() == "bad_args")
        bus.send("CONSUME", ["reader", "someday", "10", "in/"])
        #expect(bus.errorCode() == "bad_args")
        bus.send("CONSUME", ["bad name!", "earliest", "10", "in/"])
        #expect(bus.errorCode() == "bad_args")
        bus.send("CONSUME", ["reader", "earliest", "10", "nowhere/"])
        #expect(bus.errorCode() == "unknown_stage")
        bus.send("CONSUME", ["reader"])
        #expect(bus.errorCode() == "bad_frame")

        bus.send("CONSUME", ["reader", "earliest", "10", "in/"])
        #expect(bus.reply()?.verb == "OK")
        bus.send("ACK", ["reader"])
        #expect(bus.errorCode() == "bad_frame")  // the SEQ frame is missing
        bus.send("ACK", ["reader", "1"])
        #expect(bus.errorCode() == "bad_args")  // above the head SEQ (0)
        bus.send("ACK", ["reader", "x"])
        #expect(bus.errorCode() == "bad_args")
        bus.send("ACK", ["someone-else", "1"])
        #expect(bus.errorCode() == "bad_args")
        bus.send("CANCEL", ["someone-else"])
        #expect(bus.errorCode() == "bad_args")
        bus.send("CANCEL", ["reader"])
        #expect(bus.reply()?.verb == "OK")
    }

    /// docs/security.md: a consumer name belongs to its principal; an admin may take any
    /// consumer over (the old peer gets END), anyone else is refused `forbidden`.
    @Test func anAdminTakesAPluginsConsumerOverAndASubscriberIsRefused() throws {
        let keys = try (0..<3).map { _ in try CurveKeyPair.generate() }
        let bus = try CoreHarness {
            $0.pipeline = ["receipt-reducer"]
            $0.security = SecurityConfig(secretKey: keys[0].secretKey, clients: [
                .init(name: "reducer", publicKey: keys[1].publicKey, roles: [.plugin("receipt-reducer")]),
                .init(name: "ops", publicKey: keys[2].publicKey, roles: [.admin]),
                .init(name: "app", publicKey: keys[0].publicKey, roles: [.subscriber]),
            ])
        }
        defer { bus.close() }
        bus.send("CONSUME", ["receipt-reducer", "resume", "10", "in/"], peer: "plugin", userID: "reducer")
        #expect(bus.reply()?.verb == "OK")
        bus.send("CONSUME", ["receipt-reducer", "resume", "10", "out/"], peer: "phone", userID: "app")
        #expect(bus.errorCode() == "forbidden")
        bus.send("CONSUME", ["receipt-reducer", "resume", "10", "in/"], peer: "console", userID: "ops")
        let sent = bus.replies()
        #expect(sent.map(\.verb).sorted() == ["END", "OK"])
        #expect(sent.first { $0.verb == "END" }?.peer == Array("plugin".utf8))
        #expect(sent.first { $0.verb == "OK" }?.peer == Array("console".utf8))
        // The old peer no longer holds it.
        bus.send("ACK", ["receipt-reducer", "1"], peer: "plugin", userID: "reducer")
        #expect(bus.errorCode() == "bad_args")
    }

    // MARK: REQ

    @Test func aRequestNobodyAnswersTimesOutWhenTheClockSaysSo() throws {
        let bus = try CoreHarness {
            $0.pipeline = ["reducer"]
            $0.requestTimeoutMilliseconds = 5_000
        }
        defer { bus.close() }
        bus.send("REQ", ["receipts", #"{"method":"unread_counts","params":{"user_id":"u"}}"#], correlation: "q1")
        try bus.pass()
        #expect(bus.replies().isEmpty)  // the query waits for the reducer stage
        bus.clock.advance(milliseconds: 4_000)
        try bus.pass()
        #expect(bus.replies().isEmpty)
        bus.clock.advance(milliseconds: 1_001)
        try bus.pass()
        let timeout = bus.reply()
        #expect(timeout?.correlation == "q1")
        #expect(timeout?.arguments.first == "timeout")
    }

    @Test func requestsRefuseWhatIsMalformedOrUnknown() throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        bus.send("REQ", ["nobody", #"{"method":"m"}"#])
        #expect(bus.errorCode() == "unknown_service")
        bus.send("REQ", ["receipts", "{"])
        #expect(bus.errorCode() == "bad_json")
        bus.send("REQ", ["receipts", "[]"])
        #expect(bus.errorCode() == "bad_request")
        bus.send("REQ", ["receipts", #"{"params":{}}"#])
        #expect(bus.errorCode() == "bad_request")
        bus.send("REQ", ["receipts", #"{"method":"m","params":[]}"#])
        #expect(bus.errorCode() == "bad_request")
        // A query that the last stage passes on to `out` unanswered: no stage serves it.
        bus.send("REQ", ["receipts", #"{"method":"unread_counts","params":{}}"#], correlation: "q2")
        try bus.pass()
        #expect(bus.replies().isEmpty)
        let query = try #require(bus.core.record(1))
        bus.send("PUB", [Array("out".utf8), query.event], peer: "last-stage")
        try bus.pass()
        let sent = bus.replies()
        #expect(sent.map(\.verb) == ["OK", "ERR"])
        #expect(sent.last?.correlation == "q2")
        #expect(sent.last?.arguments.first == "unknown_service")
    }

    // MARK: The stream

    /// What never leaves the broker (``BrokerCore/isStreamable(type:)``, a ``TypeNameSet``).
    @Test func theBrokerWithholdsQueriesRepliesAndPrivateTypes() {
        for type in EventType.allCases {
            let withheld = type.isPrivate || type == .query || type == .reply
            #expect(Array(type.rawValue.utf8).withUnsafeBufferPointer(BrokerCore.isStreamable(type:)) == !withheld, "\(type)")
        }
        for type in ["message.rea", "message.readx", "Query", "channel.create"] {
            #expect(Array(type.utf8).withUnsafeBufferPointer(BrokerCore.isStreamable(type:)), "\(type)")
        }
    }

    @Test func outEventsReachTheStreamOnlyAfterTheirCommitAndAFullSubscriberIsCounted() throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        bus.core.subscriptionChanged([1] + Array("out/".utf8), userID: nil)
        bus.send("PUB", [Array("out".utf8), Self.event("o1")])
        #expect(bus.output.published.isEmpty)
        try bus.pass()
        #expect(bus.output.published.count == 1)
        #expect(bus.output.published.first?.first.map { String(decoding: $0, as: UTF8.self) } == "out/messaging:general/message.read")
        bus.output.streamFull = true
        bus.send("PUB", [Array("out".utf8), Self.event("o2")])
        try bus.pass()
        #expect(bus.output.published.count == 2)  // sent with dropping on: the others get it
        #expect(bus.core.statistics.streamOverflows == 1)
    }

    /// Without keys, an event is sent to the stream only while some prefix is subscribed
    /// (the XPUB passes up each prefix's first subscription and last unsubscription).
    @Test func nothingIsSentToAStreamNobodySubscribesTo() throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        bus.send("PUB", [Array("out".utf8), Self.event("o1")])
        try bus.pass()
        #expect(bus.output.published.isEmpty)
        bus.core.subscriptionChanged([1] + Array("out/".utf8), userID: nil)
        bus.core.subscriptionChanged([1] + Array("diag/".utf8), userID: nil)
        bus.send("PUB", [Array("out".utf8), Self.event("o2")])
        try bus.pass()
        #expect(bus.output.published.count == 1)
        bus.core.subscriptionChanged([0] + Array("out/".utf8), userID: nil)
        bus.send("PUB", [Array("out".utf8), Self.event("o3")])
        try bus.pass()
        #expect(bus.output.published.count == 2, "diag/ is still held: libzmq filters by prefix")
        bus.core.subscriptionChanged([0] + Array("diag/".utf8), userID: nil)
        #expect(bus.core.statistics.streamSubscriptions == 0)
        bus.send("PUB", [Array("out".utf8), Self.event("o4")])
        try bus.pass()
        #expect(bus.output.published.count == 2)
        #expect(bus.replies().map(\.verb) == ["OK", "OK", "OK", "OK"], "each PUB is confirmed all the same")
    }

    /// With keys the XPUB is manual and passes up every message, a stray unsubscription
    /// too: the count cannot say that nobody listens, so every event is sent.
    @Test func withKeysEveryEventIsSentWhateverTheCount() throws {
        let keys = try (0..<2).map { _ in try CurveKeyPair.generate() }
        let bus = try CoreHarness {
            $0.security = SecurityConfig(secretKey: keys[0].secretKey, clients: [
                .init(name: "ops", publicKey: keys[1].publicKey, roles: [.admin]),
            ])
        }
        defer { bus.close() }
        bus.core.subscriptionChanged([0] + Array("out/".utf8), userID: "ops")
        bus.send("PUB", [Array("out".utf8), Self.event("o1")], userID: "ops")
        try bus.pass()
        #expect(bus.output.published.count == 1)
    }
}
