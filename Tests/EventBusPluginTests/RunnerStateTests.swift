import EventBus
import Testing

@testable import EventBusPlugin

/// The runner's protocol bookkeeping, driven with no socket: frames in, actions out.
@Suite struct RunnerStateTests {
    let t0 = ContinuousClock.now
    func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    func makeState(appliedSeq: UInt64 = 0, persistent: Bool = false, services: [String] = []) -> RunnerState {
        var configuration = PluginConfiguration(name: "p", inputStage: "in", outputStage: "next",
                                                commandEndpoint: "tcp://test:1", dataDirectory: "/nonexistent")
        configuration.credit = 1_000
        configuration.confirmTimeoutMilliseconds = 5_000
        return RunnerState(configuration: configuration, services: services, persistent: persistent,
                           appliedSeq: appliedSeq, now: t0)
    }

    func sent(_ actions: [RunnerState.Action]) -> [[[UInt8]]] {
        actions.compactMap { if case .send(let frames) = $0 { frames } else { nil } }
    }
    func reconnects(_ actions: [RunnerState.Action]) -> Bool {
        actions.contains { if case .reconnect = $0 { true } else { false } }
    }
    func settled(_ actions: [RunnerState.Action]) -> [UInt64] {
        actions.flatMap { action -> [UInt64] in
            guard case .settled(let batches) = action else { return [] }
            return batches.map(\.lastSeq)
        }
    }
    func verb(_ frames: [[UInt8]]) -> String { String(decoding: frames[1], as: UTF8.self) }

    func ok(_ request: [[UInt8]], _ body: [[UInt8]] = []) -> ClientFrames.Inbound {
        ClientFrames.parse([bytes("EB1"), bytes("OK"), request[2]] + body)
    }
    func err(_ request: [[UInt8]], _ code: String, _ message: String = "no") -> ClientFrames.Inbound {
        ClientFrames.parse([bytes("EB1"), bytes("ERR"), request[2], bytes(code), bytes(message)])
    }

    /// A state attached after HELLO (listing `features`) and CONSUME were answered.
    func consuming(features: String = #"["batch","compact_ok"]"#, appliedSeq: UInt64 = 0) throws -> RunnerState {
        var state = makeState(appliedSeq: appliedSeq)
        let frames = sent(state.connecting(now: t0))
        _ = try state.received(ok(frames[0], [bytes(#"{"features":\#(features)}"#)]), now: t0)
        _ = try state.received(ok(frames[1], [bytes(String(appliedSeq + 1))]), now: t0)
        #expect(state.phase == .consuming)
        return state
    }

    func events(_ count: Int, passedFrom seq: UInt64? = nil) -> [OutgoingEvent] {
        (0..<count).map { n in
            OutgoingEvent(bytes: bytes(#"{"n":\#(n)}"#), passedSeq: seq.map { $0 + UInt64(n) })
        }
    }

    func publish(_ state: inout RunnerState, lastSeq: UInt64, _ outgoing: [OutgoingEvent], at now: ContinuousClock.Instant) -> [[[UInt8]]] {
        sent(state.publish(lastSeq: lastSeq, inputs: outgoing.count, started: now,
                           outputs: [("next", outgoing), ("diag", [])], now: now))
    }

    @Test func aConnectionSaysHelloWithItsServicesThenConsumesAfterTheLastAppliedSeq() throws {
        var state = makeState(appliedSeq: 41, services: ["receipts"])
        let frames = sent(state.connecting(now: t0))
        #expect(frames.map(verb) == ["HELLO", "CONSUME"])
        let hello = try JSONParser.parse(frames[0][3])
        #expect(hello["batch"]?.boolValue == true)
        #expect(hello["compact_ok"]?.boolValue == true)
        #expect(hello["role"]?.stringValue == "plugin")
        guard case .array(let services)? = hello["services"] else { Issue.record("no services in \(hello)"); return }
        #expect(services.compactMap(\.stringValue) == ["receipts"])
        #expect(Array(frames[1].dropFirst(3)) == [bytes("p"), bytes("42"), bytes("1000"), bytes("in/")])
        #expect(ClientFrames.requestNumber(frames[0][2]) != ClientFrames.requestNumber(frames[1][2]))
    }

    @Test func aPluginWithNothingAppliedStartsAtTheEarliestEventOnlyWhenItsStateIsCommitted() {
        var persistent = makeState(persistent: true)
        var stateless = makeState(persistent: false)
        #expect(sent(persistent.connecting(now: t0))[1][4] == bytes("earliest"))
        #expect(sent(stateless.connecting(now: t0))[1][4] == bytes("resume"))
    }

    @Test func outputWaitsForConsumeAndGoesAsPubsOfReferencesWhenTheBrokerOffersThem() throws {
        var state = makeState()
        let handshake = sent(state.connecting(now: t0))
        // Handled before CONSUME's OK (a batch taken before a reconnect): held back.
        #expect(publish(&state, lastSeq: 3, events(3, passedFrom: 1), at: t0).isEmpty)
        _ = try state.received(ok(handshake[0], [bytes(#"{"features":["forward","pubs"]}"#)]), now: t0)
        let resent = sent(try state.received(ok(handshake[1], [bytes("1")]), now: t0))
        #expect(resent.map(verb) == ["PUBS"])
        #expect(state.forwardsByReference && state.publishesBatches)
        #expect(try PublishBatch.split(resent[0][4], limit: 10) == [bytes("@1"), bytes("@2"), bytes("@3")])
        // One event goes as a PUB of one frame.
        let single = publish(&state, lastSeq: 4, events(1), at: t0)
        #expect(single.map(verb) == ["PUB"])
        #expect(Array(single[0].dropFirst(3)) == [bytes("next"), bytes(#"{"n":0}"#)])
    }

    @Test func withoutTheExtensionsOutputGoesAsPubsOfWholeEvents() throws {
        var state = try consuming(features: "[]")
        let frames = publish(&state, lastSeq: 2, events(2, passedFrom: 1), at: t0)
        #expect(frames.map(verb) == ["PUB"])
        #expect(Array(frames[0].dropFirst(3)) == [bytes("next"), bytes(#"{"n":0}"#), bytes(#"{"n":1}"#)])
    }

    @Test func confirmedBatchesAreAckedOldestFirstWithOneAckNamingTheLast() throws {
        var state = try consuming()
        let first = publish(&state, lastSeq: 10, events(2), at: t0)
        let second = publish(&state, lastSeq: 20, events(2), at: t0)
        #expect(!state.hasRoom(batchSize: 999))
        #expect(state.hasRoom(batchSize: 996))
        _ = try state.received(ok(second[0], [bytes("5 6")]), now: t0)
        #expect(sent(state.settle()).isEmpty, "the second batch's ACK would cover the first's unconfirmed output")
        _ = try state.received(ok(first[0], [bytes("3 4")]), now: t0)
        let actions = state.settle()
        #expect(sent(actions) == [ClientFrames.ack(name: "p", seq: 20)])
        #expect(settled(actions) == [10, 20])
        #expect(state.window.isEmpty)
        #expect(state.appliedSeq == 20)
    }

    @Test func aBusyPubIsSentAgainAtOnceThenAfterAGrowingDelayOnTheLoopsClock() throws {
        var state = try consuming()
        let pub = publish(&state, lastSeq: 1, events(1), at: t0)[0]
        let again = sent(try state.received(err(pub, "busy"), now: t0))
        #expect(again.map(verb) == ["PUB"])
        #expect(again[0][2] != pub[2], "a new CORR for each attempt")
        // The second refusal waits 20 ms: no sleep, a deadline the loop polls up to.
        #expect(sent(try state.received(err(again[0], "busy"), now: t0)).isEmpty)
        #expect(state.nextDeadline == t0 + .milliseconds(20))
        #expect(sent(state.tick(now: t0 + .milliseconds(19))).isEmpty)
        let third = sent(state.tick(now: t0 + .milliseconds(20)))
        #expect(third.map(verb) == ["PUB"])
        _ = try state.received(ok(third[0], [bytes("1")]), now: t0 + .milliseconds(21))
        #expect(settled(state.settle()) == [1])
    }

    /// Chunks refused `busy` go again in output order, and new output waits behind them: a
    /// later chunk never goes before an earlier one (a full disk reordered `out` that way).
    @Test func refusedChunksGoAgainInOrderAndNewOutputWaitsBehindThemSeed1018639775178652702() throws {
        var state = try consuming()
        let first = publish(&state, lastSeq: 1, events(1), at: t0)[0]
        let second = publish(&state, lastSeq: 2, events(1), at: t0)[0]
        // The first is refused twice: it waits 20 ms.
        let again = sent(try state.received(err(first, "busy"), now: t0))
        #expect(sent(try state.received(err(again[0], "busy"), now: t0)).isEmpty)
        // The second, refused once, would go at once: it waits behind the first.
        #expect(sent(try state.received(err(second, "busy"), now: t0)).isEmpty)
        // New output too.
        #expect(publish(&state, lastSeq: 3, events(1), at: t0).isEmpty)
        #expect(state.nextDeadline == t0 + .milliseconds(20))
        #expect(sent(state.tick(now: t0 + .milliseconds(19))).isEmpty)
        let resent = sent(state.tick(now: t0 + .milliseconds(20)))
        #expect(resent.map { $0.last! } == [first.last!, second.last!, bytes(#"{"n":0}"#)])
        for (n, pub) in resent.enumerated() { _ = try state.received(ok(pub, [bytes(String(n + 1))]), now: t0 + .milliseconds(21)) }
        #expect(settled(state.settle()) == [1, 2, 3])
    }

    @Test func aStoppingRunnerGivesUpOnAChunkTheBrokerKeepsRefusing() throws {
        var state = try consuming()
        var pub = publish(&state, lastSeq: 1, events(1), at: t0)[0]
        state.stopping = true
        var now = t0
        #expect(throws: PluginError.self) {
            for _ in 0..<100 {
                let again = sent(try state.received(err(pub, "busy"), now: now))
                now = now + .seconds(1)
                pub = try #require((again + sent(state.tick(now: now))).first)
            }
        }
    }

    @Test func refusalsThatAreNotBusyEndTheRun() throws {
        var state = try consuming()
        let pub = publish(&state, lastSeq: 1, events(1), at: t0)[0]
        #expect { _ = try state.received(err(pub, "bad_event", "event 0: no id"), now: t0) } throws: { error in
            "\(error)".contains("refused output of p to next") && "\(error)".contains("bad_event")
        }
        var connecting = makeState()
        let consume = sent(connecting.connecting(now: t0))[1]
        #expect { _ = try connecting.received(err(consume, "forbidden"), now: t0) } throws: { error in
            "\(error)".contains("CONSUME in/ refused")
        }
        var taken = try consuming()
        #expect { _ = try taken.received(.end(name: "p", reason: "taken over by another CONSUME"), now: t0) } throws: { error in
            "\(error)".contains("taken over")
        }
    }

    /// A CONSUME refused `busy` (a JetStream gateway whose cluster is electing) is asked
    /// again on a new connection after 250 ms, 500 ms, 1 s, … up to 4 s while the refusals
    /// go on; once one is answered, the next refusal waits 250 ms again. Never an exit.
    @Test func aBusyConsumeIsAskedAgainAfterAGrowingWait() throws {
        var state = makeState()
        var now = t0
        var waits: [Duration] = []
        for _ in 0..<6 {
            let consume = sent(state.connecting(now: now))[1]
            let actions = try state.received(err(consume, "busy", "no quorum"), now: now)
            #expect(!reconnects(actions))
            let due = try #require(state.nextDeadline)
            waits.append(due - now)
            #expect(!reconnects(state.tick(now: due - .milliseconds(1))))
            #expect(reconnects(state.tick(now: due)))
            #expect(state.phase == .disconnected)
            now = due
        }
        #expect(waits == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(4)])
        let frames = sent(state.connecting(now: now))
        _ = try state.received(ok(frames[1], [bytes("1")]), now: now)
        #expect(state.phase == .consuming)
        let again = sent(state.connecting(now: now))[1]
        _ = try state.received(err(again, "busy"), now: now)
        #expect(state.nextDeadline == now + .milliseconds(250))
        // A stopping runner ends instead.
        var stopping = makeState()
        stopping.stopping = true
        let consume = sent(stopping.connecting(now: t0))[1]
        #expect { _ = try stopping.received(err(consume, "busy"), now: t0) } throws: { error in
            "\(error)".contains("CONSUME in/ refused")
        }
    }

    @Test func aFailedAckIsLoggedNotFatal() throws {
        var state = try consuming()
        let ack = ClientFrames.ack(name: "p", seq: 9)
        let actions = try state.received(err(ack, "bad_args"), now: t0)
        #expect(actions.contains { if case .log(.warning, _, _) = $0 { true } else { false } })
    }

    /// A front that answers a connection's PUBs one at a time (the JetStream gateway) keeps
    /// the later ones waiting longer than the timeout: while confirms keep coming, that is a
    /// queue, not a dead connection; five seconds without any is.
    @Test func confirmsThatKeepComingHoldOffTheTimeoutAndSilenceDoesNot() throws {
        var state = try consuming(appliedSeq: 5)
        let first = publish(&state, lastSeq: 9, events(3), at: t0)
        _ = publish(&state, lastSeq: 12, events(3), at: t0)
        _ = try state.received(ok(first[0], [bytes("1 2 3")]), now: t0 + .seconds(4))
        #expect(!reconnects(state.tick(now: t0 + .seconds(5))), "the second waited 5 s, but confirms are coming")
        #expect(state.nextDeadline == t0 + .seconds(9))
        #expect(!reconnects(state.tick(now: t0 + .milliseconds(8_999))))
        #expect(reconnects(state.tick(now: t0 + .seconds(9))), "5 s without a confirm")
    }

    @Test func noConfirmInTimeReconnectsAndResendsTheUnconfirmedOutputInOrderOnceConsuming() throws {
        var state = try consuming(appliedSeq: 5)
        let pubs = publish(&state, lastSeq: 9, events(3), at: t0)
        #expect(state.nextDeadline == t0 + .seconds(5))
        #expect(!reconnects(state.tick(now: t0 + .milliseconds(4_999))))
        #expect(reconnects(state.tick(now: t0 + .seconds(5))))
        let handshake = sent(state.connecting(now: t0 + .seconds(5)))
        #expect(handshake[1][4] == bytes("10"), "CONSUME after the last applied SEQ")
        // The old CORR is forgotten: its late OK confirms nothing.
        _ = try state.received(ok(pubs[0], [bytes("1 2 3")]), now: t0 + .seconds(5))
        #expect(!state.window.isEmpty)
        _ = try state.received(ok(handshake[0], [bytes(#"{"features":[]}"#)]), now: t0 + .seconds(5))
        let resent = sent(try state.received(ok(handshake[1], [bytes("10")]), now: t0 + .seconds(5)))
        #expect(resent.count == 1)
        #expect(Array(resent[0].dropFirst(3)) == Array(pubs[0].dropFirst(3)))
    }

    @Test func aConnectionThatDoesNotAnswerConsumeIsReplaced() {
        var state = makeState()
        _ = state.connecting(now: t0)
        #expect(state.nextDeadline == t0 + .seconds(2))
        #expect(!reconnects(state.tick(now: t0 + .seconds(1))))
        #expect(reconnects(state.tick(now: t0 + .seconds(2))))
        #expect(state.phase == .disconnected)
    }

    /// A peer that answered HELLO is there: its CONSUME gets 30 s (a JetStream gateway may
    /// take seconds to set up the consumer), not the 2 s of a broker that is not there.
    @Test func onceHelloIsAnsweredConsumeHasLonger() throws {
        var state = makeState()
        let frames = sent(state.connecting(now: t0))
        _ = try state.received(ok(frames[0], [bytes(#"{"features":[]}"#)]), now: t0 + .milliseconds(5))
        #expect(state.nextDeadline == t0 + .milliseconds(5) + .seconds(30))
        #expect(!reconnects(state.tick(now: t0 + .seconds(10))))
        #expect(reconnects(state.tick(now: t0 + .seconds(31))))
    }

    @Test func anIdleConnectionIsPingedAndASilentBrokerGivenUp() throws {
        var state = try consuming()
        #expect(state.nextDeadline == t0 + .seconds(2))
        let ping = sent(state.tick(now: t0 + .seconds(2)))
        #expect(ping.map(verb) == ["PING"])
        #expect(sent(state.tick(now: t0 + .seconds(3))).isEmpty, "one PING at a time")
        _ = try state.received(ok(ping[0]), now: t0 + .seconds(3))
        #expect(state.ping == nil)
        // Events keep a connection alive.
        state.heard(now: t0 + .seconds(4))
        #expect(sent(state.tick(now: t0 + .milliseconds(5_999))).isEmpty)
        let second = sent(state.tick(now: t0 + .seconds(6)))
        #expect(second.map(verb) == ["PING"])
        #expect(reconnects(state.tick(now: t0 + .seconds(9))))
    }

    @Test func nothingIsAckedOrPingedBeforeConsumeIsAnswered() {
        var state = makeState()
        _ = state.connecting(now: t0)
        #expect(publish(&state, lastSeq: 1, [], at: t0).isEmpty)
        #expect(state.settle().isEmpty)
        #expect(sent(state.tick(now: t0 + .milliseconds(1_999))).isEmpty)
    }
}
