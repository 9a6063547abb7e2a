import EventBusChaos
import EventBusCore

/// A small round's history that keeps every rule, built with the model itself: the `in`
/// events below, then, as the pipeline would have logged them, every event the model sends
/// to `out`; an observer that received all that `out` delivers and ACKed it; the confirms of
/// every `in` event. The tests doctor copies of it.
struct HistoryFixture {
    static let cid = "messaging:team"

    static func ingress(_ n: Int, _ type: String, _ data: String, subject: String = cid) -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"e\#(n)","source":"/chat-api","type":"\#(type)","subject":"\#(subject)","time":"2026-11-22T09:00:0\#(n % 10).000Z","data":\#(data)}"#.utf8)
    }

    /// ann, bob and cat in a channel; ann posts m1–m3; bob gets them and reads them one by
    /// one, marks m3 unread (privately: his own watermark only) and reads it again; cat reads
    /// m2, turns read receipts off and reads m3.
    static let inEvents: [[UInt8]] = [
        ingress(1, "channel.created", #"{"cid":"\#(cid)","members":["ann","bob","cat"]}"#),
        ingress(2, "message.new", #"{"cid":"\#(cid)","message":{"id":"m1","user_id":"ann","created_at":"2026-11-22T09:00:02.000Z"}}"#),
        ingress(3, "message.new", #"{"cid":"\#(cid)","message":{"id":"m2","user_id":"ann","created_at":"2026-11-22T09:00:03.000Z"}}"#),
        ingress(4, "message.delivered", #"{"cid":"\#(cid)","user_id":"bob","message_id":"m2"}"#),
        ingress(5, "message.read", #"{"cid":"\#(cid)","user_id":"bob","message_id":"m1"}"#),
        ingress(6, "message.new", #"{"cid":"\#(cid)","message":{"id":"m3","user_id":"ann","created_at":"2026-11-22T09:00:06.000Z"}}"#),
        ingress(7, "message.read", #"{"cid":"\#(cid)","user_id":"bob","message_id":"m2"}"#),
        ingress(8, "message.read", #"{"cid":"\#(cid)","user_id":"bob","message_id":"m3"}"#),
        ingress(9, "notification.mark_unread", #"{"cid":"\#(cid)","user_id":"bob","message_id":"m3"}"#),
        ingress(10, "message.read", #"{"cid":"\#(cid)","user_id":"bob","message_id":"m3"}"#),
        ingress(11, "message.read", #"{"cid":"\#(cid)","user_id":"cat","message_id":"m2"}"#),
        ingress(12, "user.updated", #"{"user":{"id":"cat","privacy_settings":{"read_receipts":{"enabled":false}}}}"#, subject: "@cat"),
        ingress(13, "message.read", #"{"cid":"\#(cid)","user_id":"cat","message_id":"m3"}"#),
    ]

    static func record(_ seq: UInt64, stage: String, _ event: [UInt8]) throws -> LoggedRecord {
        let envelope = try EventValidator.validate(event, stage: "plugin").envelope
        return LoggedRecord(seq: seq, topic: "\(stage)/\(envelope.subject)/\(envelope.type)", source: envelope.source, id: envelope.id, event: event)
    }

    static func make(pipeline: [String] = FaultPlan.defaultPipeline) throws -> ChaosHistory {
        var records = try inEvents.enumerated().map { try record(UInt64($0.offset + 1), stage: "in", $0.element) }
        var model = try PipelineModel(pipeline: pipeline)
        for record in records { try model.apply(record) }
        for event in model.out { records.append(try record(UInt64(records.count + 1), stage: "out", event)) }
        let confirmed = records.filter { $0.stage == "in" }.map { ConfirmedEvent(source: $0.source, id: $0.id, seq: $0.seq) }
        var steps: [ObserverLog.Step] = [.attached]
        let delivered = records.filter(\.isDeliveredFromOut)
        for record in delivered { steps.append(.delivered(seq: record.seq, event: record.event)) }
        if let last = delivered.last {
            steps.append(.acked(seq: last.seq))
            steps.append(.ackTaken(seq: last.seq, at: 1))
        }
        return ChaosHistory(pipeline: pipeline, records: records, confirmed: confirmed,
                            published: confirmed.map { EventIdentity(source: $0.source, id: $0.id) }, observer: ObserverLog(steps: steps), queries: [])
    }
}

extension ChaosHistory {
    /// The records of `out` of `type` for `user`, in order.
    func outRecords(_ type: String, user: String) -> [LoggedRecord] {
        records.filter { $0.stage == "out" && $0.type == type && String(decoding: $0.event, as: UTF8.self).contains(#""user_id":"\#(user)""#) }
    }
}
