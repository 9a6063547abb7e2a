import EventBus
import Foundation
import Testing

/// PUB: validation, atomic batches, limits, stages and deduplication.
@Suite struct PublishTests {
    @Test func publishReturnsOneSeqPerEventInOrder() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        let reply = try peer.call("PUB", [Array("in".utf8), Events.read(message: "m1"), Events.read(message: "m2")])
        #expect(reply.values == ["1", "2"])
        #expect(try peer.call("PUB", [Array("in".utf8), Events.read()]).values == ["3"])
    }

    @Test func oneBadEventRefusesTheWholeBatchAndNamesIt() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        let bad = Events.make(type: "message.read", subject: "messaging:general",
                              data: #"{"cid":"messaging:general","user_id":"bo b","message_id":"m1"}"#)
        let reply = try peer.call("PUB", [Array("in".utf8), Events.read(), bad, Events.read()])
        #expect(reply.code == "bad_event")
        #expect(reply.message.contains("event 1"))
        #expect(reply.message.contains("user_id"))
        #expect(try peer.call("STATS").json["head_seq"] as? Int == 0)
    }

    @Test func pubWithoutEventsIsBadFrame() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        #expect(try peer.call("PUB", ["in"]).code == "bad_frame")
        #expect(try peer.call("PUB").code == "bad_frame")
    }

    @Test func unconfiguredStageIsUnknownStage() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let reply = try bus.peer().call("PUB", [Array("nowhere".utf8), Events.read()])
        #expect(reply.code == "unknown_stage")
    }

    @Test func typeOutsideTheCatalogueAtStageInIsUnknownType() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        let event = Events.make(type: "message.liked", subject: "messaging:general", data: #"{"cid":"messaging:general"}"#)
        let reply = try peer.call("PUB", [Array("in".utf8), event])
        #expect(reply.code == "unknown_type")
        #expect(reply.message.contains("message.liked"))
        // Plugin stages carry any well-formed type.
        #expect(try peer.call("PUB", [Array("plugin-a".utf8), event]).isOK)
    }

    @Test func invalidJSONIsBadJSON() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let reply = try bus.peer().call("PUB", [Array("in".utf8), Array(#"{"specversion":"1.0","#.utf8)])
        #expect(reply.code == "bad_json")
        #expect(reply.message.contains("event 0"))
    }

    @Test func subjectDifferentFromCidIsBadEvent() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let event = Events.make(type: "message.read", subject: "messaging:other",
                                data: #"{"cid":"messaging:general","user_id":"bob","message_id":"m1"}"#)
        let reply = try bus.peer().call("PUB", [Array("in".utf8), event])
        #expect(reply.code == "bad_event")
        #expect(reply.message.contains("cid"))
    }

    @Test func eventOverMaxEventBytesIsTooLarge() throws {
        let bus = try TestBroker { $0.maxEventBytes = 1_000 }; defer { bus.stop() }
        let padding = String(repeating: "x", count: 1_000)
        let event = Events.make(type: "message.read", subject: "messaging:general",
                                data: #"{"cid":"messaging:general","user_id":"bob","message_id":"m1","pad":"\#(padding)"}"#)
        let reply = try bus.peer().call("PUB", [Array("in".utf8), event])
        #expect(reply.code == "too_large")
        #expect(reply.message.contains("max_event_bytes"))
    }

    @Test func replyEventsMayExceedMaxEventBytesUpToTheBatchLimit() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        let padding = String(repeating: "x", count: 100_000)
        let reply = #"{"specversion":"1.0","id":"r-big","source":"/test-plugin","type":"reply","subject":"receipts","replyto":"nobody.1","data":{"result":{"pad":"\#(padding)"}}}"#
        #expect(reply.utf8.count > WireProtocol.defaultMaxEventBytes)
        let accepted = try peer.call("PUB", [Array("out".utf8), Array(reply.utf8)])
        #expect(accepted.isOK, "\(accepted.code ?? "") \(accepted.message)")
        #expect(accepted.values.count == 1)
        let read = Events.make(type: "message.read", subject: "messaging:general",
                               data: #"{"cid":"messaging:general","user_id":"bob","message_id":"m1","pad":"\#(padding)"}"#)
        let refused = try peer.call("PUB", [Array("out".utf8), read])
        #expect(refused.code == "too_large")
        #expect(refused.message.contains("max_event_bytes"))
        // Beyond the batch limit, even a reply is refused.
        let huge = #"{"specversion":"1.0","id":"r-huge","source":"/test-plugin","type":"reply","subject":"receipts","replyto":"nobody.2","data":{"pad":"\#(String(repeating: "x", count: WireProtocol.maxBatchBytes))"}}"#
        #expect(try peer.call("PUB", [Array("out".utf8), Array(huge.utf8)]).code == "too_large")
    }

    @Test func batchOverAThousandEventsIsTooLarge() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let events = (0..<1_001).map { Events.read(message: "m\($0)") }
        let reply = try bus.peer().call("PUB", [Array("in".utf8)] + events)
        #expect(reply.code == "too_large")
        let accepted = try bus.peer().call("PUB", [Array("in".utf8)] + Array(events.prefix(1_000)))
        #expect(accepted.values.count == 1_000)
    }

    @Test func repeatedSourceAndIDGetTheOriginalSeqAndIsNotAppended() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        #expect(try peer.call("PUB", [Array("in".utf8), Events.read(id: "a")]).values == ["1"])
        #expect(try peer.call("PUB", [Array("in".utf8), Events.read(id: "b"), Events.read(id: "a")]).values == ["2", "1"])
        #expect(try peer.call("PUB", [Array("in".utf8), Events.read(id: "c"), Events.read(id: "c")]).values == ["3", "3"])
        let stats = try peer.call("STATS").json
        #expect(stats["head_seq"] as? Int == 3)
        #expect(stats["dedup_hits"] as? Int == 2)
    }

    @Test func aRefusedBatchCountsNoDedupHits() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        #expect(try peer.call("PUB", [Array("in".utf8), Events.read(id: "a")]).values == ["1"])
        let bad = Events.make(type: "message.read", subject: "messaging:general", data: #"{"cid":"messaging:general"}"#)
        #expect(try peer.call("PUB", [Array("in".utf8), Events.read(id: "a"), bad]).code == "bad_event")
        #expect(try peer.call("STATS").json["dedup_hits"] as? Int == 0)
    }

    @Test func sameIdentityOnAnotherStageIsANewEntry() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        #expect(try peer.call("PUB", [Array("in".utf8), Events.read(id: "a")]).values == ["1"])
        #expect(try peer.call("PUB", [Array("plugin-a".utf8), Events.read(id: "a")]).values == ["2"])
    }

    @Test func deduplicationSurvivesARestart() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        #expect(try bus.peer().call("PUB", [Array("in".utf8), Events.read(id: "a")]).values == ["1"])
        try bus.restart()
        #expect(try bus.peer().call("PUB", [Array("in".utf8), Events.read(id: "a"), Events.read(id: "b")]).values == ["1", "2"])
    }

    @Test func confirmedEventsSurviveARestart() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let events = (0..<50).map { Events.read(message: "m\($0)") }
        #expect(try bus.peer().call("PUB", [Array("in".utf8)] + events).values.count == 50)
        try bus.restart()
        let stats = try bus.peer().call("STATS").json
        #expect(stats["head_seq"] as? Int == 50)
        #expect((stats["stages"] as? [String: Int])?["in"] == 50)
    }

    @Test func eventWithoutTimeAtInGetsTheAppendTimeAndOthersStayByteForByte() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        let untimed = Array(#"{"specversion":"1.0","id":"u1","source":"/t","type":"message.read","subject":"messaging:general","data":{"cid":"messaging:general","user_id":"bob","message_id":"m1"}}"#.utf8)
        let timed = Events.read(id: "t1")
        #expect(try peer.call("PUB", [Array("in".utf8), untimed, timed]).values == ["1", "2"])
        #expect(try peer.call("CONSUME", ["c", "earliest", "10", "in/"]).isOK)
        var events: [[UInt8]] = []
        while events.count < 2, let frames = try peer.receive() {
            if frames.count == 6 { events.append(frames[5]) }
        }
        let stamped = try EventValidator.validate(events[0], stage: "in").envelope
        #expect(stamped.id == "u1")
        #expect(Identifier.isValidTimestamp(stamped.time ?? ""))
        #expect(events[1] == timed)
    }
}
