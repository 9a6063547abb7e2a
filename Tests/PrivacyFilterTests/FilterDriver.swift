import EventBus
import EventBusPlugin
import PrivacyFilter
import ReceiptReducer

/// Runs the reducer and privacy filters over ingress payloads without sockets,
/// as the pipeline `receipt-reducer,FILTERS…` would: each stage sees the
/// previous stage's output in order, one event at a time.
struct FilterDriver {
    var reducer = ReceiptReducer()
    var filters: [(filter: PrivacyFilter, state: PrivacySettings)]
    var seq: UInt64 = 0
    /// What reached `out`, as (topic, bytes).
    var out: [(topic: String, bytes: [UInt8])] = []
    /// What reached `diag` from the filters.
    var audit: [JSONValue] = []
    /// The input SEQ of each `message.read` / `message.delivered` the reducer emitted, by out order.
    var time = "2026-11-22T03:10:00.000Z"

    init(_ filters: [PrivacyFilter]) {
        self.filters = filters.map { ($0, PrivacySettings()) }
    }

    static func envelope(type: String, subject: String, data: [UInt8], id: String, time: String?, replyto: String? = nil) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("specversion"); w.string("1.0")
        w.key("id"); w.string(id)
        w.key("source"); w.string("/test")
        w.key("type"); w.string(type)
        w.key("subject"); w.string(subject)
        if let time { w.key("time"); w.string(time) }
        if let replyto { w.key("replyto"); w.string(replyto) }
        w.key("data"); w.raw(data)
        w.endObject()
        return w.bytes
    }

    /// Sends events through the filters in order; returns what reached `out`.
    mutating func runFilters(_ events: [(subject: String, type: String, bytes: [UInt8])]) throws -> [(topic: String, bytes: [UInt8])] {
        var stage = events.map { (topic: "receipt-reducer/\($0.subject)/\($0.type)", bytes: $0.bytes) }
        for i in filters.indices {
            var next: [(topic: String, bytes: [UInt8])] = []
            for event in stage {
                seq += 1
                var output = PluginOutput(plugin: filters[i].filter.name)
                try filters[i].filter.handle(PluginEvent(seq: seq, topic: event.topic, bytes: event.bytes),
                                             state: &filters[i].state, output: &output)
                for bytes in output.forward {
                    let envelope = try EventValidator.validate(bytes, stage: "any").envelope
                    next.append(("\(filters[i].filter.name)/\(envelope.subject)/\(envelope.type)", bytes))
                }
                for bytes in output.diagnostics {
                    audit.append(try JSONParser.parse(bytes))
                }
            }
            stage = next
        }
        let reached = stage.filter { EventType(rawValue: String($0.topic.split(separator: "/").last ?? ""))?.isPrivate != true }
        out += reached
        return reached
    }

    /// Publishes one ingress payload: the reducer folds it, the filters judge what it emits.
    @discardableResult
    mutating func send(_ payload: IngressPayload) throws -> [(topic: String, bytes: [UInt8])] {
        seq += 1
        let data = Self.data(payload)
        let input = ReducerInput(seq: seq, time: time, payload: payload, data: data)
        var events: [(subject: String, type: String, bytes: [UInt8])] = []
        if payload.type.isPrivate {
            let subject: String
            switch payload {
            case .userUpdated(let user, _, _): subject = "@" + user
            case .channelTypeUpdated(let name, _, _): subject = name
            case .userDeleted(let user, _), .userBanned(let user, nil), .userUnbanned(let user, nil): subject = "@" + user
            default: subject = payload.cid ?? ""
            }
            events.append((subject, payload.type.rawValue,
                           Self.envelope(type: payload.type.rawValue, subject: subject, data: data.serialized(), id: "in\(seq)", time: time)))
        }
        for output in reducer.apply(input) {
            let bytes = Self.envelope(type: output.type, subject: output.subject, data: output.data, id: "r\(seq)-\(events.count)", time: time)
            if output.stage == "out" {
                events.append((output.subject, output.type, bytes))
            } else if output.type == EventType.receiptSuppressed.rawValue {
                // The reducer audits an ack made with its receipt hidden itself (docs/events.md rule 19).
                audit.append(try JSONParser.parse(bytes))
            }
        }
        return try runFilters(events)
    }

    /// Asks the reducer and returns the `result` that would reach the requester.
    mutating func query(_ method: String, _ params: [(String, JSONValue)]) throws -> JSONValue {
        let answer = try reducer.answer(method: method, params: .object(params.map { (key: $0.0, value: $0.1) }))
        let reply = Self.envelope(type: "reply", subject: "receipts", data: answer.data, id: "q\(seq)", time: time, replyto: "token")
        let reached = try runFilters([("receipts", "reply", reply)])
        guard let last = reached.last, let data = try EventValidator.validate(last.bytes, stage: "any").envelope.data,
              let result = data["result"] else { return .null }
        return result
    }

    /// The ingress `data` object of a payload (enough for the reducer and the filters).
    static func data(_ payload: IngressPayload) -> JSONValue {
        func obj(_ m: [(String, JSONValue)]) -> JSONValue { .object(m.map { (key: $0.0, value: $0.1) }) }
        switch payload {
        case .userUpdated(let user, let delivery, let read):
            var settings: [(String, JSONValue)] = []
            if let delivery { settings.append(("delivery_receipts", obj([("enabled", .bool(delivery))]))) }
            if let read { settings.append(("read_receipts", obj([("enabled", .bool(read))]))) }
            return obj([("user", obj([("id", .string(user)), ("privacy_settings", obj(settings))]))])
        case .channelTypeUpdated(let name, let delivery, let read):
            var fields: [(String, JSONValue)] = [("name", .string(name))]
            if let delivery { fields.append(("delivery_events", .bool(delivery))) }
            if let read { fields.append(("read_events", .bool(read))) }
            return obj(fields)
        case .channelCreated(let cid, let members):
            return obj([("cid", .string(cid)), ("members", .array(members.map { .string($0) }))])
        case .memberAdded(let cid, let user), .memberRemoved(let cid, let user):
            return obj([("cid", .string(cid)), ("user_id", .string(user))])
        case .messageNew(let cid, let message):
            return obj([("cid", .string(cid)), ("message", obj([
                ("id", .string(message.id)), ("user_id", .string(message.userID)), ("created_at", .string(message.createdAt)),
                ("type", .string(message.kind.rawValue)), ("silent", .bool(message.silent)),
            ]))])
        case .messageDeleted(let cid, let id):
            return obj([("cid", .string(cid)), ("message_id", .string(id))])
        case .messageDelivered(let cid, let user, let id, _), .messageRead(let cid, let user, let id, _),
             .notificationMarkUnread(let cid, let user, let id):
            return obj([("cid", .string(cid)), ("user_id", .string(user)), ("message_id", .string(id))])
        case .notificationMarkRead(let cid, let user, _):
            return obj([("cid", .string(cid)), ("user_id", .string(user))])
        case .notificationMarkAllRead(let user, _):
            return obj([("user_id", .string(user))])
        case .memberUpdated(let cid, let user, let muted, let countUnread):
            var fields: [(String, JSONValue)] = [("cid", .string(cid)), ("user_id", .string(user))]
            if let muted { fields.append(("muted", .bool(muted))) }
            if let countUnread { fields.append(("count_unread", .string(countUnread.rawValue))) }
            return obj(fields)
        case .channelTruncated(let cid, let id):
            return obj([("cid", .string(cid))] + (id.map { [("message_id", .string($0))] } ?? []))
        case .channelHidden(let cid, let user, let clear):
            return obj([("cid", .string(cid)), ("user_id", .string(user)), ("clear_history", .bool(clear))])
        case .channelVisible(let cid, let user):
            return obj([("cid", .string(cid)), ("user_id", .string(user))])
        case .channelDeleted(let cid):
            return obj([("cid", .string(cid))])
        case .userDeleted(let user, let hard):
            return obj([("user_id", .string(user)), ("hard_delete", .bool(hard))])
        case .userBanned(let user, let cid), .userUnbanned(let user, let cid):
            return obj([("user_id", .string(user))] + (cid.map { [("cid", .string($0))] } ?? []))
        }
    }
}

extension Array where Element == (topic: String, bytes: [UInt8]) {
    /// `subject/type` of each event.
    var kinds: [String] { map { $0.topic.split(separator: "/", maxSplits: 1).last.map(String.init) ?? "" } }
}

func message(_ id: String, from user: String) -> NewMessage {
    NewMessage(id: id, userID: user, createdAt: "2026-11-22T03:00:00.000Z", kind: .regular, silent: false)
}

func obj(_ m: [(String, JSONValue)]) -> JSONValue { .object(m.map { (key: $0.0, value: $0.1) }) }
