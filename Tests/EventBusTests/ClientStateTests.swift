import Testing
@testable import EventBus
@testable import EventBusCore

/// The client's bookkeeping, driven with no socket: waiters are Ints, sinks are Strings.
@Suite struct ClientStateTests {
    typealias State = ClientState<Int, String>
    let t0 = ContinuousClock.now
    func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
    func makeState() -> State { State(endpoint: "tcp://test:1", requestTimeout: .seconds(10), resendAfter: .seconds(2)) }

    func sent(_ actions: [State.Action]) -> [[[UInt8]]] {
        actions.compactMap { if case .send(_, let frames) = $0 { frames } else { nil } }
    }
    func completed(_ actions: [State.Action]) -> [(Int, Result<[[UInt8]], BusError>)] {
        actions.compactMap { if case .complete(let w, let r) = $0 { (w, r) } else { nil } }
    }
    func delivered(_ actions: [State.Action]) -> [UInt64] {
        actions.compactMap { if case .deliver(_, let d) = $0 { d.seq } else { nil } }
    }
    func ok(_ corr: [UInt8], _ body: [[UInt8]] = []) -> [[UInt8]] { [bytes("EB1"), bytes("OK"), corr] + body }
    func evt(_ name: String, _ seq: UInt64) -> [[UInt8]] {
        [bytes("EB1"), bytes("EVT"), bytes(name), bytes(String(seq)), bytes("out/x/t"), bytes("{}")]
    }

    @Test func repliesResumeTheirOwnWaiterInAnyOrder() throws {
        var state = makeState()
        let a = sent(state.request(.ping, [], waiter: 1, now: t0))[0]
        let b = sent(state.request(.stats, [], waiter: 2, now: t0))[0]
        #expect(a[2] != b[2])
        let second = completed(state.received(ok(b[2], [bytes("{}")])))
        #expect(second.map(\.0) == [2])
        #expect(try second[0].1.get() == [bytes("{}")])
        #expect(completed(state.received(ok(a[2]))).map(\.0) == [1])
        #expect(state.pending.isEmpty)
        // A duplicate reply (after a resend) is dropped.
        #expect(completed(state.received(ok(a[2]))).isEmpty)
    }

    /// Ordered publishing (docs/protocol.md) is asked for before the first PUB it covers,
    /// and again first on a new connection; without the option, after the first PUB.
    @Test func anOrderedClientAsksForOrderBeforeItsFirstPub() {
        var ordered = State(endpoint: "tcp://test:1", requestTimeout: .seconds(10), resendAfter: .seconds(2), ordered: true)
        let frames = sent(ordered.request(.pub, [bytes("in"), bytes("x")], waiter: 1, now: t0))
        #expect(frames.count == 2)
        #expect(frames[0] == ClientFrames.orderedBatchHello)
        #expect(frames[1][1] == bytes("PUB"))
        #expect(String(decoding: frames[0][3], as: UTF8.self) == #"{"batch":true,"ordered":true}"#)
        _ = ordered.disconnected()
        #expect(sent(ordered.connected(now: t0)).first == ClientFrames.orderedBatchHello)
        var plain = makeState()
        let plainFrames = sent(plain.request(.pub, [bytes("in"), bytes("x")], waiter: 1, now: t0))
        #expect(plainFrames.map { $0[1] } == [bytes("PUB"), bytes("HELLO")])
    }

    @Test func errReplyFailsTheWaiterWithTheBrokersCode() {
        var state = makeState()
        let frames = sent(state.request(.pub, [bytes("in"), bytes("x")], waiter: 7, now: t0))[0]
        let done = completed(state.received([bytes("EB1"), bytes("ERR"), frames[2], bytes("bad_json"), bytes("event 0")]))
        #expect(done.count == 1)
        #expect(throws: BusError(.badJSON, "event 0")) { try done[0].1.get() }
    }

    @Test func idempotentRequestIsResentWithTheSameCorrAfterResendAfterButREQIsNot() {
        var state = makeState()
        let pub = sent(state.request(.pub, [bytes("in"), bytes("x")], waiter: 1, now: t0))[0]
        _ = state.request(.req, [bytes("receipts"), bytes("{}")], waiter: 2, now: t0)
        #expect(sent(state.tick(now: t0 + .seconds(1))).isEmpty)
        #expect(sent(state.tick(now: t0 + .milliseconds(2_001))) == [pub])
        #expect(sent(state.tick(now: t0 + .milliseconds(2_500))).isEmpty)
    }

    @Test func everyRequestTimesOutAfterRequestTimeout() {
        var state = makeState()
        _ = state.request(.req, [bytes("receipts"), bytes("{}")], waiter: 5, now: t0)
        #expect(completed(state.tick(now: t0 + .seconds(9))).isEmpty)
        let done = completed(state.tick(now: t0 + .seconds(10)))
        #expect(done.map(\.0) == [5])
        guard case .failure(let error) = done[0].1 else { Issue.record("not a failure"); return }
        #expect(error.code == .timeout)
        #expect(error.message.contains("tcp://test:1"))
        #expect(state.pending.isEmpty)
        #expect(state.nextDeadline == nil)
    }

    @Test func refusedSendIsRetriedAtTheNextTickAfterItsRetryTime() {
        var state = makeState()
        let frames = sent(state.request(.req, [bytes("s"), bytes("{}")], waiter: 1, now: t0))[0]
        state.sendFailed(request: 1, now: t0)
        #expect(sent(state.tick(now: t0)).isEmpty)
        #expect(state.nextDeadline == t0 + State.retryRefusedSendAfter)
        #expect(sent(state.tick(now: t0 + State.retryRefusedSendAfter)) == [frames])
        #expect(sent(state.tick(now: t0 + State.retryRefusedSendAfter)).isEmpty)
    }

    /// A request made after a refused one waits behind it: the socket may take the later one
    /// first as its connection comes up, and order is the meaning of a publish.
    @Test func aRequestMadeAfterARefusedOneGoesAfterIt() {
        var state = makeState()
        let first = sent(state.request(.pub, [bytes("in"), bytes("a")], waiter: 1, now: t0))[0]
        state.sendFailed(request: 1, now: t0)
        #expect(sent(state.request(.pub, [bytes("in"), bytes("b")], waiter: 2, now: t0)).isEmpty)
        let later = t0 + State.retryRefusedSendAfter
        let both = sent(state.tick(now: later))
        #expect(both.count == 2)
        #expect(both.first == first)
        #expect(both.last?[4] == bytes("b"))
    }

    /// A request made while the connection is lost goes after every request from before the
    /// loss, which are resent first (issue 17: a retried event must never land after a later one).
    @Test func aRequestMadeWhileDisconnectedGoesAfterTheResends() {
        var state = makeState()
        let a = sent(state.request(.pub, [bytes("in"), bytes("a")], waiter: 1, now: t0))[0]
        _ = state.disconnected()
        #expect(sent(state.request(.pub, [bytes("in"), bytes("b")], waiter: 2, now: t0)).isEmpty)
        #expect(sent(state.tick(now: t0 + .seconds(3))).isEmpty)  // not even a resend while lost
        let resent = sent(state.connected(now: t0 + .seconds(3)))
        // The new connection asks for batched publish again first.
        #expect(resent.count == 3)
        #expect(resent.first == ClientFrames.batchHello)
        #expect(resent[1] == a)
        #expect(resent.last?[4] == bytes("b"))
    }

    @Test func theFirstConnectionSendsWhatTheSocketRefusedBeforeIt() {
        var state = makeState()
        let frames = sent(state.request(.req, [bytes("s"), bytes("{}")], waiter: 1, now: t0))[0]
        state.sendFailed(request: 1, now: t0)
        #expect(sent(state.connected(now: t0)) == [frames])
    }

    @Test func firstConnectResendsNothingButReconnectResendsEveryWaitingRequest() {
        var state = makeState()
        let pub = sent(state.request(.pub, [bytes("in"), bytes("x")], waiter: 1, now: t0))[0]
        let req = sent(state.request(.req, [bytes("s"), bytes("{}")], waiter: 2, now: t0))[0]
        #expect(sent(state.connected(now: t0)).isEmpty)
        _ = state.disconnected()
        // The new connection asks for batched publish again (a PUB waits), then resends.
        #expect(sent(state.connected(now: t0)) == [ClientFrames.batchHello, pub, req])
        // Only once per loss.
        #expect(sent(state.connected(now: t0)).isEmpty)
    }

    /// Starts consumer `c` (start `earliest`) and returns the state after its OK.
    func activeConsumer() -> State {
        var state = makeState()
        let frames = sent(state.consume(name: "c", start: .earliest, credit: 10, prefixes: ["out/"], waiter: 1, sink: "c", now: t0))
        // The connection's first CONSUME is preceded by the HELLO that asks for batched delivery.
        #expect(frames.count == 2)
        #expect(frames[0] == ClientFrames.batchHello)
        let consume = frames[1]
        #expect(consume[1] == bytes("CONSUME"))
        #expect(Array(consume[3...]) == [bytes("c"), bytes("earliest"), bytes("10"), bytes("out/")])
        #expect(completed(state.received(ok(consume[2], [bytes("1")]))).map(\.0) == [1])
        return state
    }

    @Test func reconnectResumesConsumerAfterItsLastAckAndResendsTheAck() {
        var state = activeConsumer()
        #expect(delivered(state.received(evt("c", 1)) + state.received(evt("c", 2)) + state.received(evt("c", 3))) == [1, 2, 3])
        #expect(sent(state.ack(name: "c", seq: 2)).count == 1)
        _ = state.disconnected()
        let resent = sent(state.connected(now: t0))
        // The new connection asks for batches again, then resumes the consumer and resends its ACK.
        #expect(resent.count == 3)
        #expect(resent[0] == ClientFrames.batchHello)
        let frames = Array(resent.dropFirst())
        #expect(frames[0][1] == bytes("CONSUME"))
        #expect(Array(frames[0][3...]) == [bytes("c"), bytes("3"), bytes("10"), bytes("out/")])
        #expect(frames[1] == ClientFrames.ack(name: "c", seq: 2))
        // Event 3 comes again: already yielded, so dropped; 4 is new.
        #expect(delivered(state.received(evt("c", 3)) + state.received(evt("c", 4))) == [4])
        // The resume's OK is absorbed, resuming no caller.
        #expect(completed(state.received(ok(frames[0][2], [bytes("3")]))).isEmpty)
    }

    @Test func reconnectBeforeAnyAckResumesFromTheOriginalStart() {
        var state = activeConsumer()
        _ = state.received(evt("c", 1))
        _ = state.disconnected()
        let frames = sent(state.connected(now: t0))
        #expect(frames.count == 2)
        #expect(frames[1][4] == bytes("earliest"))
    }

    @Test func failedResumeEndsTheConsumerWithTheError() {
        var state = activeConsumer()
        _ = state.disconnected()
        let consume = sent(state.connected(now: t0))[1]
        let actions = state.received([bytes("EB1"), bytes("ERR"), consume[2], bytes("bad_args"), bytes("no")])
        let finished = actions.compactMap { if case .finish(let s, let e, _) = $0 { (s, e) } else { nil } }
        #expect(finished.count == 1)
        #expect(finished.first?.1?.code == .badArgs)
        #expect(state.consumers.isEmpty)
    }

    @Test func anEVTSDeliversItsEventsInOrderSkippingThoseAlreadySeen() {
        var state = activeConsumer()
        #expect(delivered(state.received(evt("c", 1))) == [1])
        let batch = DeliveryBatch.encode([(1, bytes("out/x/t"), bytes("{}")), (2, bytes("out/x/t"), bytes("{}")), (5, bytes("out/y/t"), bytes("[]"))])
        let actions = state.received([bytes("EB1"), bytes("EVTS"), bytes("c"), batch])
        #expect(delivered(actions) == [2, 5])
        let topics = actions.compactMap { if case .deliver(_, let d) = $0 { d.topic } else { nil } }
        #expect(topics == ["out/x/t", "out/y/t"])
        // A malformed batch is dropped whole, and said so.
        let broken = state.received([bytes("EB1"), bytes("EVTS"), bytes("c"), bytes("7 1 1\nab9 9")])
        #expect(delivered(broken).isEmpty)
    }

    @Test func theBatchHellosReplyIsAbsorbedAndAnotherConsumerDoesNotAskAgain() {
        var state = activeConsumer()
        #expect(state.received(ok(ClientFrames.batchHelloCorrelation, [bytes("{}")])).isEmpty)
        let second = sent(state.consume(name: "d", start: .latest, credit: 5, prefixes: ["out/"], waiter: 3, sink: "d", now: t0))
        #expect(second.count == 1)
        #expect(second[0][1] == bytes("CONSUME"))
    }

    @Test func endFinishesTheConsumerWithTheReason() {
        var state = activeConsumer()
        let actions = state.received([bytes("EB1"), bytes("END"), bytes("c"), bytes("taken over")])
        let reasons = actions.compactMap { if case .finish(_, nil, let r) = $0 { r } else { nil } }
        #expect(reasons == ["taken over"])
        #expect(delivered(state.received(evt("c", 9))).isEmpty)
        // Not resumed after a reconnect.
        _ = state.disconnected()
        #expect(sent(state.connected(now: t0)).isEmpty)
    }

    @Test func cancelEndsTheConsumerAndIsNotResentAfterAReconnect() {
        var state = activeConsumer()
        let cancel = state.cancel(name: "c", waiter: 4, now: t0)
        #expect(sent(cancel).first?[1] == bytes("CANCEL"))
        _ = state.disconnected()
        let after = state.connected(now: t0)
        #expect(sent(after).isEmpty)
        #expect(completed(after).map(\.0) == [4])
    }

    @Test func secondConsumeOfTheSameNameIsRefusedLocally() {
        var state = activeConsumer()
        let done = completed(state.consume(name: "c", start: .latest, credit: 1, prefixes: ["out/"], waiter: 2, sink: "c2", now: t0))
        #expect(done.count == 1)
        #expect(throws: BusError.self) { try done[0].1.get() }
    }

    @Test func shutdownFailsWaitersAndEndsConsumers() {
        var state = activeConsumer()
        _ = state.request(.stats, [], waiter: 3, now: t0)
        let actions = state.shutdown(reason: BusError(.busy, "closed"))
        #expect(completed(actions).map(\.0) == [3])
        #expect(actions.contains { if case .finish("c", nil, nil) = $0 { true } else { false } })
    }

    @Test(arguments: [(Duration.seconds(10), "10 s"), (.milliseconds(250), "0.25 s"), (.milliseconds(1_500), "1.5 s")])
    func durationsPrintAsSeconds(duration: Duration, text: String) {
        #expect(State.format(duration) == text)
    }
}

/// A publisher sends batches as PUBS once the broker's HELLO answer lists `pubs`.
@Suite struct ClientStatePublishBatchTests {
    typealias State = ClientState<Int, String>
    let t0 = ContinuousClock.now
    func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
    func sent(_ actions: [State.Action]) -> [[[UInt8]]] {
        actions.compactMap { if case .send(_, let frames) = $0 { frames } else { nil } }
    }
    func helloAnswer(_ features: String) -> [[UInt8]] {
        [bytes("EB1"), bytes("OK"), ClientFrames.batchHelloCorrelation, bytes(#"{"features":\#(features)}"#)]
    }

    @Test func aBatchGoesAsPubsOnceTheBrokerOffersIt() throws {
        var state = State(endpoint: "tcp://test:1", requestTimeout: .seconds(10), resendAfter: .seconds(2))
        let events = [bytes("{\"a\":1}"), bytes("{\"b\":2}")]
        // The first PUB goes as it is, and the HELLO that asks what the broker offers follows it.
        let first = sent(state.request(.pub, [bytes("in")] + events, waiter: 1, now: t0))
        #expect(first.map { $0[1] } == [bytes("PUB"), bytes("HELLO")])
        _ = state.received(helloAnswer(#"["batch","pubs"]"#))
        #expect(state.offersPubs)
        let second = sent(state.request(.pub, [bytes("in")] + events, waiter: 2, now: t0))
        #expect(second.count == 1)
        #expect(second[0][1] == bytes("PUBS"))
        #expect(try PublishBatch.split(second[0][4], limit: 10) == events)
        // One event stays a PUB; after a lost connection, PUB again until the broker says so again.
        #expect(sent(state.request(.pub, [bytes("in"), events[0]], waiter: 3, now: t0))[0][1] == bytes("PUB"))
        _ = state.disconnected()
        #expect(!state.offersPubs)
        // Nothing goes out while the connection is lost; once back, HELLO first, then every
        // unanswered request in order, the one made while lost last, as a PUB.
        #expect(sent(state.request(.pub, [bytes("in")] + events, waiter: 4, now: t0)).isEmpty)
        #expect(sent(state.connected(now: t0)).map { $0[1] }
            == [bytes("HELLO"), bytes("PUB"), bytes("PUBS"), bytes("PUB"), bytes("PUB")])
    }

    @Test func aBrokerWithoutPubsGetsPubs() {
        var state = State(endpoint: "tcp://test:1", requestTimeout: .seconds(10), resendAfter: .seconds(2))
        _ = state.request(.pub, [bytes("in"), bytes("{}"), bytes("{}")], waiter: 1, now: t0)
        _ = state.received(helloAnswer(#"["batch"]"#))
        #expect(!state.offersPubs)
        #expect(sent(state.request(.pub, [bytes("in"), bytes("{}"), bytes("{}")], waiter: 2, now: t0))[0][1] == bytes("PUB"))
    }
}
