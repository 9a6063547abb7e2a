import EventBusCore

/// Rule 5 of ``ChaosChecker``: in `out`, per (channel, user, thread), each `message.read`
/// and each `message.delivered` moves its watermark strictly forward (docs/events.md: they
/// are emitted only when it moved forward); only the user's `notification.mark_unread` moves
/// the read watermark back, to the message it names as the last read. A message's place is
/// the order of the channel's `message.new` events in `out`.
struct WatermarkRule {
    /// Message id → place, per channel.
    private var places: [String: [String: Int]] = [:]
    /// The last watermark place per (kind, channel, user, thread): −1 is "none" (null).
    private var marks: [String: (place: Int, message: String)] = [:]
    private(set) var violations: [Violation] = []

    static func check(_ records: [LoggedRecord]) -> [Violation] {
        var rule = WatermarkRule()
        for record in records where record.stage == "out" {
            rule.observe(record)
        }
        return rule.violations
    }

    mutating func observe(_ record: LoggedRecord) {
        let type = record.type
        guard type == "message.new" || type == "message.read" || type == "message.delivered" || type == "notification.mark_unread",
              let data = try? EventValidator.validate(record.event, stage: "plugin").envelope.data,
              case .string(let cid)? = data["cid"] else { return }
        if type == "message.new" {
            guard case .string(let id)? = data["message"]?["id"] else { return }
            if places[cid, default: [:]][id] == nil { places[cid, default: [:]][id] = places[cid]?.count ?? 0 }
            return
        }
        guard case .string(let user)? = data["user_id"] else { return }
        let thread = data["parent_id"]?.stringValue ?? ""
        let isDelivery = type == "message.delivered"
        let field = isDelivery ? "last_delivered_message_id" : "last_read_message_id"
        let key = "\(isDelivery ? "delivered" : "read")\u{0}\(cid)\u{0}\(user)\u{0}\(thread)"
        let message = data[field]?.stringValue
        let place: Int
        if let message {
            guard let known = places[cid]?[message] else {
                violations.append(.watermarkUnknownMessage(seq: record.seq, cid: cid, user: user, message: message))
                return
            }
            place = known
        } else {
            place = -1
        }
        if type != "notification.mark_unread", let previous = marks[key], place <= previous.place {
            violations.append(.watermarkBackwards(seq: record.seq, type: String(type), cid: cid, user: user,
                                                  from: previous.message, to: message ?? "null"))
        }
        marks[key] = (place, message ?? "null")
    }
}
