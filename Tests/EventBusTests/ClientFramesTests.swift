import Testing
@testable import EventBus
@testable import EventBusCore

@Suite struct ClientFramesTests {
    func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    @Test func requestFramesStartWithSignatureVerbAndCorr() {
        let corr = ClientFrames.correlation(0x0102)
        #expect(corr == [0, 0, 0, 0, 0, 0, 1, 2])
        #expect(ClientFrames.requestNumber(corr) == 0x0102)
        #expect(ClientFrames.request(.pub, corr: corr, [bytes("in"), bytes("{}")])
            == [bytes("EB1"), bytes("PUB"), corr, bytes("in"), bytes("{}")])
    }

    @Test func ackCarriesDecimalSeqAndACorrThatNamesIt() {
        let frames = ClientFrames.ack(name: "tail", seq: 42)
        #expect(frames.count == 5)
        #expect(frames[1] == bytes("ACK"))
        #expect(frames[3] == bytes("tail"))
        #expect(frames[4] == bytes("42"))
        #expect(ClientFrames.ackedSeq(frames[2]) == 42)
        #expect(ClientFrames.requestNumber(frames[2]) == nil)
    }

    @Test func consumeArgumentsAreNameStartCreditPrefixes() {
        #expect(ClientFrames.consumeArguments(name: "p", start: .seq(7), credit: 100, prefixes: ["out/", "diag/"])
            == [bytes("p"), bytes("7"), bytes("100"), bytes("out/"), bytes("diag/")])
        #expect(ConsumeStart.resume.wire == "resume")
        #expect(ConsumeStart(wire: "12") == .seq(12))
        #expect(ConsumeStart(wire: "-1") == nil)
    }

    @Test func okReplyParsesToCorrAndBody() {
        let corr = ClientFrames.correlation(9)
        #expect(ClientFrames.parse([bytes("EB1"), bytes("OK"), corr, bytes("1"), bytes("2")])
            == .ok(corr: corr, body: [bytes("1"), bytes("2")]))
    }

    @Test func errReplyParsesToTypedError() {
        let corr = ClientFrames.correlation(3)
        #expect(ClientFrames.parse([bytes("EB1"), bytes("ERR"), corr, bytes("bad_event"), bytes("event 0: no id")])
            == .err(corr: corr, error: BusError(.badEvent, "event 0: no id")))
        guard case .err(_, let unknown) = ClientFrames.parse([bytes("EB1"), bytes("ERR"), corr, bytes("what"), bytes("m")]) else {
            Issue.record("not an ERR")
            return
        }
        #expect(unknown.code == .badFrame)
        #expect(unknown.message.contains("what"))
    }

    @Test func evtAndEndParse() {
        #expect(ClientFrames.parse([bytes("EB1"), bytes("EVT"), bytes("c"), bytes("17"), bytes("out/x/t"), bytes("{}")])
            == .event(name: "c", delivery: Delivery(seq: 17, topic: "out/x/t", event: bytes("{}"))))
        #expect(ClientFrames.parse([bytes("EB1"), bytes("END"), bytes("c"), bytes("taken over")])
            == .end(name: "c", reason: "taken over"))
    }

    @Test(arguments: [
        [[UInt8]](),
        [Array("EB2".utf8), Array("OK".utf8), [1]],
        [Array("EB1".utf8), Array("NOPE".utf8)],
        [Array("EB1".utf8), Array("EVT".utf8), Array("c".utf8), Array("x1".utf8), Array("t".utf8), Array("{}".utf8)],
        [Array("EB1".utf8), Array("ERR".utf8), [1]],
    ])
    func malformedMessagesAreReportedNotTrusted(frames: [[UInt8]]) {
        if case .malformed = ClientFrames.parse(frames) {} else { Issue.record("parsed \(frames)") }
    }

    @Test func pubReplySeqsMustMatchTheEventCount() throws {
        #expect(try ClientFrames.parseSeqs([bytes("5"), bytes("6")], expected: 2).get() == [5, 6])
        #expect(throws: BusError.self) { try ClientFrames.parseSeqs([bytes("5")], expected: 2).get() }
        #expect(throws: BusError.self) { try ClientFrames.parseSeqs([bytes("+5")], expected: 1).get() }
    }

    @Test func aCompactOKCarriesEverySeqInOneFrameSeparatedBySpaces() throws {
        #expect(try ClientFrames.parseSeqs([bytes("5 6 5")], expected: 3).get() == [5, 6, 5])
        #expect(try ClientFrames.parseSeqs([bytes("7")], expected: 1).get() == [7])
        for bad in ["5 6", "5  6 7", "5 6 7 ", " 5 6", "5 x 7", "5,6,7"] {
            #expect(throws: BusError.self, "\(bad)") { try ClientFrames.parseSeqs([bytes(bad)], expected: 3).get() }
        }
    }

    @Test func requestBodyEscapesTheMethodAndKeepsParams() throws {
        #expect(ClientFrames.requestBody(method: "a\"b", params: " {\"cid\":\"x\"}\n")
            == bytes(#"{"method":"a\"b","params":{"cid":"x"}}"#))
        #expect(ClientFrames.requestBody(method: "m", params: "") == bytes(#"{"method":"m","params":{}}"#))
        let tricky = "tab\there\u{1}\\ \"quoted\" é"
        #expect(try JSONParser.parse(Array(JSONText.quoted(tricky).utf8)) == .string(tricky))
    }

    @Test func streamSeqIsEightBytesBigEndian() {
        #expect(ClientFrames.bigEndianUInt64([0, 0, 0, 0, 0, 0, 1, 0]) == 256)
        #expect(ClientFrames.bigEndianUInt64([1, 0]) == nil)
    }

    @Test func batchesRespectCountAndByteLimits() {
        let events = (0..<25).map { _ in [UInt8](repeating: 1, count: 10) }
        #expect(BusClient.batches(of: events, batchSize: 10, maxBytes: 1_000) == [0..<10, 10..<20, 20..<25])
        #expect(BusClient.batches(of: events, batchSize: 100, maxBytes: 35) .allSatisfy { $0.count == 3 || $0.count == 1 })
        #expect(BusClient.batches(of: [], batchSize: 10, maxBytes: 100) == [])
        #expect(BusClient.batches(of: [[UInt8](repeating: 0, count: 500), [1]], batchSize: 10, maxBytes: 100) == [0..<1, 1..<2])
    }

    @Test func failedRangeIsReadBackFromAPublishAllError() {
        #expect(BusClient.failedEventRange(of: BusError(.badEvent, "events 500-999: event 3: no id")) == 500...999)
        #expect(BusClient.failedEventRange(of: BusError(.timeout, "no reply")) == nil)
    }

    /// The builders the plugin runner and the readiness probe send with (issue 16, item 4).
    @Test func requestBuildersNumberTheirCorrAndCarryTheirArguments() {
        let corr = ClientFrames.correlation(5)
        #expect(ClientFrames.ping(request: 5) == [bytes("EB1"), bytes("PING"), corr])
        #expect(ClientFrames.stats(request: 5) == [bytes("EB1"), bytes("STATS"), corr])
        #expect(ClientFrames.consume(request: 5, name: "p", start: .earliest, credit: 10, prefixes: ["in/"])
            == [bytes("EB1"), bytes("CONSUME"), corr, bytes("p"), bytes("earliest"), bytes("10"), bytes("in/")])
        #expect(ClientFrames.publish(request: 5, stage: "next", events: [bytes("{}"), bytes("@7")])
            == [bytes("EB1"), bytes("PUB"), corr, bytes("next"), bytes("{}"), bytes("@7")])
        #expect(ClientFrames.publishBatch(request: 5, stage: "next", events: [bytes("{}"), bytes("@7")])
            == [bytes("EB1"), bytes("PUBS"), corr, bytes("next"), bytes("2\n{}2\n@7")])
        #expect(ClientFrames.hello(request: 5, body: bytes("{}")) == [bytes("EB1"), bytes("HELLO"), corr, bytes("{}")])
    }

    @Test func helloBodyAddsWhatAPeerAsksOfItsConnectionOnlyWhenGiven() {
        #expect(ClientFrames.helloBody(name: "cli", role: "backend", version: "1")
            == bytes(#"{"name":"cli","role":"backend","version":"1"}"#))
        #expect(ClientFrames.helloBody(name: "p\"q", role: "plugin", version: "1", batch: true, compactOK: true, services: ["receipts"])
            == bytes(#"{"name":"p\"q","role":"plugin","version":"1","batch":true,"compact_ok":true,"services":["receipts"]}"#))
        #expect(ClientFrames.helloBody(name: "p", role: "plugin", version: "1", services: [])
            == bytes(#"{"name":"p","role":"plugin","version":"1","services":[]}"#))
    }

    /// Reads `frames` through an ``InboundReader`` as libzmq would hand them over.
    func read(_ frames: [[UInt8]]) -> (ClientFrames.Inbound, [Delivery]) {
        var reader = InboundReader()
        var deliveries: [Delivery] = []
        for frame in frames {
            frame.withUnsafeBytes { bytes in
                reader.take(bytes) { seq, topic, event in
                    deliveries.append(Delivery(seq: seq, topic: String(decoding: topic, as: UTF8.self), event: Array(event)))
                }
            }
        }
        return (reader.message(), deliveries)
    }

    @Test func theReaderDecodesAnEVTSBatchInPlaceAndParsesEverythingElseLikeParse() {
        let batch = DeliveryBatch.encode([(seq: 7, topic: bytes("in/a/t"), event: bytes("{}")), (seq: 9, topic: bytes("in/b/t"), event: bytes("[]"))])
        let (message, deliveries) = read([bytes("EB1"), bytes("EVTS"), bytes("c"), batch])
        #expect(message == .events(name: "c", deliveries: []))
        #expect(deliveries == [Delivery(seq: 7, topic: "in/a/t", event: bytes("{}")), Delivery(seq: 9, topic: "in/b/t", event: bytes("[]"))])
        let broken = read([bytes("EB1"), bytes("EVTS"), bytes("c"), batch + bytes("12 x")])
        #expect(broken.0 == .malformed("EVTS batch is not well formed"))
        #expect(broken.1.count == 2, "the events before the break were handed over")
        #expect(read([bytes("EB1"), bytes("EVTS"), bytes("c"), batch, bytes("extra")]).0 == .malformed("EVTS with 5 frames, expected 4"))
        for frames in [
            [bytes("EB1"), bytes("OK"), ClientFrames.correlation(3), bytes("1 2")],
            [bytes("EB1"), bytes("ERR"), ClientFrames.correlation(3), bytes("busy"), bytes("later")],
            [bytes("EB1"), bytes("EVT"), bytes("c"), bytes("4"), bytes("in/a/t"), bytes("{}")],
            [bytes("EB1"), bytes("END"), bytes("c"), bytes("taken over")],
            [bytes("EB2"), bytes("OK")],
        ] {
            #expect(read(frames).0 == ClientFrames.parse(frames))
            #expect(read(frames).1.isEmpty)
        }
    }
}
