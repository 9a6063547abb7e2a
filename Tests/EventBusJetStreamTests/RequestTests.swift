import EventBus
@testable import EventBusJetStream
import Testing

/// PUB and CONSUME checked as the broker checks them, with no I/O.
@Suite struct RequestTests {
    static func message(_ verb: String, _ arguments: [String]) throws -> CommandMessage {
        try CommandMessage.parse([[7], Array("EB1".utf8), Array(verb.utf8), Array("c".utf8)] + arguments.map { Array($0.utf8) })
    }

    static func read(_ id: String, time: String? = nil) -> String {
        let stamp = time.map { #""time":"\#($0)","# } ?? ""
        return #"{"specversion":"1.0","id":"\#(id)","source":"/chat-api","type":"message.read",\#(stamp)"subject":"messaging:general","data":{"cid":"messaging:general","user_id":"bob","message_id":"m1"}}"#
    }

    let stages = ["in", "receipt-reducer", "out", "diag"]

    @Test func aValidBatchBecomesOneMessagePerEventWithItsIdentity() throws {
        let given = "2026-11-22T03:10:00.123Z"
        let plan = try PublishPlan.make(try Self.message("PUB", ["in", Self.read("r1"), Self.read("r2", time: given)]),
                                        stages: stages, maxEventBytes: 65_536) { "2030-01-01T00:00:00.000Z" }
        #expect(plan.stream == StageStream(stage: "in"))
        #expect(plan.events.map(\.messageID) == ["in/%2Fchat-api/r1", "in/%2Fchat-api/r2"])
        // At in, an event without time gets the gateway's; one with a time keeps its bytes.
        #expect(String(decoding: plan.events[0].payload, as: UTF8.self).hasPrefix(#"{"time":"2030-01-01T00:00:00.000Z","specversion""#))
        #expect(plan.events[1].payload == Array(Self.read("r2", time: given).utf8))
    }

    @Test func aRepeatWithinABatchIsPublishedOnce() throws {
        let plan = try PublishPlan.make(try Self.message("PUB", ["in", Self.read("r1"), Self.read("r1"), Self.read("r2")]),
                                        stages: stages, maxEventBytes: 65_536) { "2030-01-01T00:00:00.000Z" }
        #expect(plan.events.map(\.messageID) == ["in/%2Fchat-api/r1", "in/%2Fchat-api/r2"])
        #expect(plan.answers == [0, 0, 1])
    }

    @Test func pubsIsThePubOfItsBatch() throws {
        let events = [Self.read("a"), Self.read("b")].map { Array($0.utf8) }
        let pubs = try CommandMessage.parse([[7], Array("EB1".utf8), Array("PUBS".utf8), [], Array("in".utf8), PublishBatch.encode(events)])
        let plan = try PublishPlan.make(try pubs.unbatched(), stages: stages, maxEventBytes: 65_536) { "2030-01-01T00:00:00.000Z" }
        #expect(plan.events.count == 2)
    }

    @Test func refusalsAreTheBrokers() throws {
        func refusal(_ arguments: [String], maxEventBytes: Int = 65_536) throws -> BusError? {
            let message = try Self.message("PUB", arguments)
            do {
                _ = try PublishPlan.make(message, stages: stages, maxEventBytes: maxEventBytes) { "t" }
                return nil
            } catch { return error }
        }
        #expect(try refusal([]) == BusError(.badFrame, "PUB: frame 3 (STAGE) is missing"))
        #expect(try refusal(["in"]) == BusError(.badFrame, "PUB: no EVENT frame after STAGE (frame 4 is missing)"))
        #expect(try refusal(["nowhere", Self.read("x")])?.code == .unknownStage)
        #expect(try refusal(["in", Self.read("x"), "{}"]) == BusError(.badEvent, "event 1: specversion: required"))
        #expect(try refusal(["in", Self.read("x"), "nope"])?.code == .badJSON)
        #expect(try refusal(["in", "@12"])?.code == .badEvent)
        #expect(try refusal(["in", Self.read("x")], maxEventBytes: 10)?.code == .tooLarge)
        let ack = #"{"specversion":"1.0","id":"q","source":"/x","type":"receipt.rejected","subject":"s"}"#
        #expect(try refusal(["in", ack])?.code == .unknownType)
        // Past in, any well-formed type; no time is stamped.
        let plan = try PublishPlan.make(try Self.message("PUB", ["diag", ack]), stages: stages, maxEventBytes: 65_536) { "t" }
        #expect(plan.events[0].payload == Array(ack.utf8))
    }

    /// Only a `reply` or a `query` that names `replyto` is passed on to the gateway that asked;
    /// an event that merely mentions "replyto" in its data is not.
    @Test func onlyRepliesAndQueriesNamingReplytoAreAnswers() throws {
        let reply = #"{"specversion":"1.0","id":"a","source":"/r","type":"reply","subject":"s","replyto":"gw1.7","data":{"result":{}}}"#
        let query = #"{"specversion":"1.0","id":"b","source":"/r","type":"query","subject":"s","replyto":"gw1.8","data":{"service":"x"}}"#
        let noToken = #"{"specversion":"1.0","id":"c","source":"/r","type":"reply","subject":"s","data":{"result":{}}}"#
        let mention = #"{"specversion":"1.0","id":"d","source":"/r","type":"message.read","subject":"s","data":{"note":"\"replyto\""}}"#
        let plan = try PublishPlan.make(try Self.message("PUB", ["out", reply, query, noToken, mention]),
                                        stages: stages, maxEventBytes: 65_536) { "t" }
        #expect(plan.events.map(\.isAnswer) == [true, true, false, false])
    }

    @Test func consumeReadsOneStage() throws {
        let request = try ConsumeRequest.parse(try Self.message("CONSUME", ["reader.1", "resume", "64", "out/@bob/", "out/messaging:general/"]), stages: stages)
        #expect(request.name == "reader.1")
        #expect(request.start == .resume)
        #expect(request.credit == 64)
        #expect(request.stage == "out")
        #expect(try ConsumeRequest.parse(try Self.message("CONSUME", ["r", "17", "1", "in"]), stages: stages).start == .sequence(17))
        #expect(try ConsumeRequest.parse(try Self.message("CONSUME", ["r", "latest", "1", "receipt-reducer/"]), stages: stages).stage == "receipt-reducer")
    }

    @Test func consumeRefusalsKeepTheBrokersOrder() throws {
        func refusal(_ arguments: [String]) throws -> BusError? {
            let message = try Self.message("CONSUME", arguments)
            do {
                _ = try ConsumeRequest.parse(message, stages: stages)
                return nil
            } catch { return error }
        }
        #expect(try refusal([]) == BusError(.badFrame, "CONSUME: frame 3 (NAME) is missing"))
        #expect(try refusal(["r"]) == BusError(.badFrame, "CONSUME: frame 4 (START) is missing"))
        #expect(try refusal(["Bad"])?.code == .badArgs)
        #expect(try refusal(["r", "resume"]) == BusError(.badFrame, "CONSUME: frame 5 (CREDIT) is missing"))
        #expect(try refusal(["r", "resume", "0", "in/"])?.code == .badArgs)
        #expect(try refusal(["r", "resume", "5"]) == BusError(.badArgs, "CONSUME: at least one PREFIX frame (frame 6) is needed"))
        #expect(try refusal(["r", "bogus", "5", "nowhere/"])?.code == .unknownStage)
        #expect(try refusal(["r", "0", "5", "in/"])?.code == .badArgs)
        // Spanning stages: this backend's one refusal of its own.
        #expect(try refusal(["r", "resume", "5", "in/", "out/"])?.code == .badArgs)
        #expect(try refusal(["r", "resume", "5", ""])?.code == .badArgs)
    }

    @Test func outWithholdsPrivateTypesQueriesAndReplies() throws {
        let out = try ConsumeRequest.parse(try Self.message("CONSUME", ["r", "resume", "5", "out/"]), stages: stages)
        #expect(out.delivers(topic: Array("out/messaging:general/message.read".utf8), type: "message.read"))
        #expect(!out.delivers(topic: Array("out/messaging:general/member.added".utf8), type: "member.added"))
        #expect(!out.delivers(topic: Array("out/receipts/reply".utf8), type: "reply"))
        let bob = try ConsumeRequest.parse(try Self.message("CONSUME", ["r", "resume", "5", "in/@bob/"]), stages: stages)
        #expect(bob.delivers(topic: Array("in/@bob/user.updated".utf8), type: "user.updated"))
        #expect(!bob.delivers(topic: Array("in/@bobby/user.updated".utf8), type: "user.updated"))
    }
}
