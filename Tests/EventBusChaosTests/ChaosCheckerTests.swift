import EventBusChaos
import EventBusCore
import Testing

/// The checker fails, with a report that names what broke, on histories doctored to break
/// each rule; and it passes the history that keeps them all (so each failure below is the
/// doctoring's, not the fixture's).
struct ChaosCheckerTests {
    @Test(arguments: [FaultPlan.defaultPipeline, ["receipt-reducer"]])
    func theUndoctoredHistoryPasses(pipeline: [String]) throws {
        let history = try HistoryFixture.make(pipeline: pipeline)
        #expect(history.records.filter { $0.stage == "out" && $0.type == "message.read" }.count >= 3, "the fixture has reads to doctor")
        #expect(ChaosChecker.check(history) == [])
    }

    /// Withheld at the source (docs/events.md rule 19): with the filters or without.
    @Test func catsReadWithHerReceiptsOffNeverReachesOut() throws {
        let full = try HistoryFixture.make(pipeline: ["receipt-reducer"])
        let filtered = try HistoryFixture.make()
        #expect(full.outRecords("message.read", user: "cat").count == 1)
        #expect(filtered.outRecords("message.read", user: "cat").count == 1)
    }

    @Test func anEventDroppedFromTheLoggedOutIsReported() throws {
        var history = try HistoryFixture.make()
        let dropped = try #require(history.outRecords("message.read", user: "bob").first)
        history.records.removeAll { $0.seq == dropped.seq }
        let violations = ChaosChecker.check(history)
        #expect(violations.contains(.seqGap(expected: dropped.seq, found: dropped.seq + 1)))
        #expect(violations.contains { violation in
            guard case .outDiffers(let subject, _, let expected?, _) = violation else { return false }
            return subject == HistoryFixture.cid && expected.contains(dropped.id)
        }, "\(violations)")
        #expect(violations.contains(.deliveryNotInOut(seq: dropped.seq)))
        #expect(violations.map(\.description).joined().contains(dropped.id))
    }

    @Test func anEventTheObserverNeverReceivedIsReported() throws {
        var history = try HistoryFixture.make()
        let skipped = try #require(history.outRecords("message.read", user: "bob").first)
        history.observer.steps.removeAll { $0 == .delivered(seq: skipped.seq, event: skipped.event) }
        let violations = ChaosChecker.check(history)
        #expect(violations.contains { if case .deliveryGap(skipped.seq, _) = $0 { true } else { false } }, "\(violations)")
        #expect(violations.contains(.observerMissed(count: 1, first: skipped.seq)))
    }

    @Test func aConfirmedEventLoggedTwiceIsReported() throws {
        var history = try HistoryFixture.make()
        let original = try #require(history.records.first { $0.stage == "in" && $0.type == "message.read" })
        let head = history.records.map(\.seq).max() ?? 0
        history.records.append(LoggedRecord(seq: head + 1, topic: original.topic, source: original.source, id: original.id, event: original.event))
        let violations = ChaosChecker.check(history)
        #expect(violations.contains(.duplicateIdentity(stage: "in", source: "/chat-api", id: original.id, seqs: [original.seq, head + 1])))
        #expect(violations.first { if case .duplicateIdentity = $0 { true } else { false } }?.description
            == "duplicate: in /chat-api \(original.id) is logged 2 times, at SEQs \(original.seq), \(head + 1)")
    }

    /// Rule 8: what a hostile peer sent never reaches the log.
    @Test func anEventOfTheHostilePeerInTheLogIsReported() throws {
        var history = try HistoryFixture.make()
        let head = history.records.map(\.seq).max() ?? 0
        let frame = HostileMessages.message(.unknownType, n: 7).last!
        history.records.append(LoggedRecord(seq: head + 1, topic: "in/messaging:hostile/message.liked", source: HostileMessages.source,
                                            id: "h7", event: frame))
        let violations = ChaosChecker.check(history)
        #expect(violations.contains(.hostileEventLogged(seq: head + 1, topic: "in/messaging:hostile/message.liked", id: "h7")), "\(violations)")
    }

    @Test func aPublishedEventNeverConfirmedIsReported() throws {
        var history = try HistoryFixture.make()
        let dropped = history.confirmed.removeLast()
        #expect(ChaosChecker.check(history) == [.unconfirmed(count: 1, first: EventIdentity(source: dropped.source, id: dropped.id))])
    }

    @Test func aConfirmedEventMissingFromInIsReported() throws {
        var history = try HistoryFixture.make()
        let lost = try #require(history.confirmed.last)
        history.records = history.records.map { record in
            record.seq == lost.seq ? LoggedRecord(seq: record.seq, topic: record.topic, source: record.source, id: "other", event: record.event) : record
        }
        #expect(ChaosChecker.check(history).contains(.confirmedEventMissing(lost, found: "\(history.records[Int(lost.seq) - 1].topic) /chat-api other")))
    }

    @Test func aWatermarkMovedBackwardsIsReported() throws {
        var history = try HistoryFixture.make()
        let reads = history.outRecords("message.read", user: "bob")
        try #require(reads.count == 3)
        // bob's third read (m3, after m2) doctored to name m1.
        let last = reads[2]
        let text = String(decoding: last.event, as: UTF8.self)
        try #require(text.contains(#""last_read_message_id":"m3""#))
        let doctored = Array(text.replacingOccurrences(of: #""last_read_message_id":"m3""#, with: #""last_read_message_id":"m1""#).utf8)
        history.records = history.records.map { record in
            record.seq == last.seq ? LoggedRecord(seq: last.seq, topic: last.topic, source: last.source, id: last.id, event: doctored) : record
        }
        let violations = ChaosChecker.check(history)
        #expect(violations.contains(.watermarkBackwards(seq: last.seq, type: "message.read", cid: HistoryFixture.cid, user: "bob", from: "m2", to: "m1")),
                "\(violations)")
        #expect(violations.first { if case .watermarkBackwards = $0 { true } else { false } }?.description
            == "watermark moved backwards: message.read at SEQ \(last.seq) for (\(HistoryFixture.cid), bob) went from m2 to m1")
    }

    @Test func aPrivateMarkUnreadMovesNothingBackwards() throws {
        let history = try HistoryFixture.make()
        // bob reads m1, m2, m3, marks m3 unread (his own watermark back to m2), reads m3
        // again: only his devices hear of the last two, and nothing moves backwards.
        #expect(history.outRecords("message.read", user: "bob").count == 3)
        #expect(history.outRecords("notification.mark_unread", user: "bob").count == 1)
        #expect(!ChaosChecker.check(history).contains { if case .watermarkBackwards = $0 { true } else { false } })
    }

    @Test func aResumeThatSkipsPastTheLastAckIsReported() throws {
        var history = try HistoryFixture.make()
        let delivered = history.records.filter(\.isDeliveredFromOut)
        // Attached again after ACKing the second event, the observer got the fourth first.
        var steps: [ObserverLog.Step] = [.attached]
        steps += delivered.prefix(2).map { .delivered(seq: $0.seq, event: $0.event) }
        steps += [.acked(seq: delivered[1].seq), .ackTaken(seq: delivered[1].seq, at: 1), .attached]
        steps += delivered.dropFirst(3).map { .delivered(seq: $0.seq, event: $0.event) }
        history.observer = ObserverLog(steps: steps)
        let violations = ChaosChecker.check(history)
        #expect(violations.contains(.resumeNotAfterAck(first: delivered[3].seq, lastAck: delivered[1].seq)))
        #expect(violations.contains(.observerMissed(count: 1, first: delivered[2].seq)))
    }

    @Test func aResumeBeforeATakenAckIsReportedUnlessTheBrokerCrashedRightAfterOrItsDiskFailed() throws {
        var history = try HistoryFixture.make()
        let delivered = history.records.filter(\.isDeliveredFromOut)
        func observer(killedAt: (from: Double, to: Double)?) -> ObserverLog {
            var steps: [ObserverLog.Step] = [.attached]
            steps += delivered.prefix(3).map { .delivered(seq: $0.seq, event: $0.event) }
            steps += [.acked(seq: delivered[0].seq), .ackTaken(seq: delivered[0].seq, at: 1),
                      .acked(seq: delivered[2].seq), .ackTaken(seq: delivered[2].seq, at: 5)]
            if let killedAt { steps.append(.brokerCrashed(from: killedAt.from, to: killedAt.to)) }
            // Resumed after the first ACK: the broker had taken the third.
            steps.append(.attached)
            steps += delivered.dropFirst(1).map { .delivered(seq: $0.seq, event: $0.event) }
            return ObserverLog(steps: steps)
        }
        history.observer = observer(killedAt: nil)
        #expect(ChaosChecker.check(history) == [.resumeRepeatsTakenAck(first: delivered[1].seq, takenAck: delivered[2].seq)])
        history.observer = observer(killedAt: (20, 20))
        #expect(ChaosChecker.check(history) == [.resumeRepeatsTakenAck(first: delivered[1].seq, takenAck: delivered[2].seq)])
        history.observer = observer(killedAt: (7, 12))
        #expect(ChaosChecker.check(history) == [.resumeRepeatsTakenAck(first: delivered[1].seq, takenAck: delivered[2].seq)])
        // Killed 0.2 s after it took the ACK: the offset may be lost (docs/protocol.md, "Consuming").
        history.observer = observer(killedAt: (5.2, 5.2))
        #expect(ChaosChecker.check(history) == [])
        // Its disk failed 2 s before it took the ACK, and it stopped 8 s later: nothing was saved.
        history.observer = observer(killedAt: (3, 13))
        #expect(ChaosChecker.check(history) == [])
    }

    @Test func aQueryAnsweredOtherwiseThanTheModelIsReported() throws {
        var history = try HistoryFixture.make()
        let params = JSONValue.object([(key: "user_id", value: .string("bob"))])
        let head = history.records.map(\.seq).max() ?? 0
        let query = Array(#"{"specversion":"1.0","id":"q1","source":"/eventbus/broker","type":"query","subject":"receipts","replyto":"t1","data":{"method":"unread_counts","params":{"user_id":"bob"}}}"#.utf8)
        history.records.append(try HistoryFixture.record(head + 1, stage: "in", query))
        var model = try PipelineModel(pipeline: history.pipeline)
        for record in history.records where record.stage == "in" { try model.apply(record) }
        let right = try #require(model.answers[head + 1])
        #expect(right["total_unread_count"]?.int64Value == 0, "bob read everything: \(right)")
        history.queries = [QueryProbe(method: "unread_counts", params: params, answer: right)]
        #expect(ChaosChecker.check(history) == [])
        guard case .object(var members) = right else { Issue.record("not an object"); return }
        members = members.map { $0.key == "total_unread_count" ? (key: $0.key, value: JSONValue.number("1")) : $0 }
        history.queries = [QueryProbe(method: "unread_counts", params: params, answer: .object(members))]
        #expect(ChaosChecker.check(history).contains { if case .queryDiffers("unread_counts", _, _, _) = $0 { true } else { false } })
        history.queries = [QueryProbe(method: "unread_counts", params: .object([(key: "user_id", value: .string("ann"))]), answer: right)]
        #expect(ChaosChecker.check(history) == [.queryNotLogged(method: "unread_counts", params: #"{"user_id":"ann"}"#)])
    }
}
