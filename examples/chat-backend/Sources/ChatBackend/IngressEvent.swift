import Foundation

/// A CloudEvents 1.0 event for stage `in`, as docs/events.md describes it.
struct IngressEvent<Payload: Encodable & Sendable>: Encodable, Sendable {
    let specversion = "1.0"
    /// Unique per `source`: the broker's deduplication key, so a retry reuses it.
    let id: String
    let source: String
    let type: String
    /// The cid for channel events, `@user` for `user.updated`.
    let subject: String
    let time: String
    let data: Payload

    /// The event's JSON bytes.
    func json() throws -> [UInt8] {
        Array(try JSONResponse.encoder.encode(self))
    }
}

extension Date {
    /// The date as the bus writes times: RFC 3339 UTC with exactly three fraction digits and `Z`.
    var busTimestamp: String {
        formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

/// The `data` of `channel.created`.
struct ChannelCreated: Encodable, Sendable {
    let cid: String
    let members: [String]
}

/// The `data` of `member.added` and `member.removed`.
struct MemberChange: Encodable, Sendable {
    let cid: String
    let userID: String

    enum CodingKeys: String, CodingKey {
        case cid
        case userID = "user_id"
    }
}

/// The `data` of `message.new`: the message with its text (the reducer passes it on to `out`).
struct MessageNew: Encodable, Sendable {
    let cid: String
    let message: StoredMessage
}

/// The `data` of `member.updated`: a member's settings for one channel.
struct MemberUpdated: Encodable, Sendable {
    let cid: String
    let userID: String
    let muted: Bool?
    let countUnread: String?

    enum CodingKeys: String, CodingKey {
        case cid, muted
        case userID = "user_id"
        case countUnread = "count_unread"
    }
}

/// The `data` of `message.deleted`.
struct MessageDeleted: Encodable, Sendable {
    let cid: String
    let messageID: String

    enum CodingKeys: String, CodingKey {
        case cid
        case messageID = "message_id"
    }
}

/// The `data` of the acks: `message.delivered`, `message.read`, `notification.mark_read`
/// (no message id) and `notification.mark_unread`.
struct Ack: Encodable, Sendable {
    let cid: String
    let userID: String
    let messageID: String?

    enum CodingKeys: String, CodingKey {
        case cid
        case userID = "user_id"
        case messageID = "message_id"
    }
}

/// The `data` of `user.updated`.
struct UserUpdated: Encodable, Sendable {
    struct Setting: Encodable, Sendable {
        let enabled: Bool
    }

    struct Privacy: Encodable, Sendable {
        let deliveryReceipts: Setting?
        let readReceipts: Setting?

        enum CodingKeys: String, CodingKey {
            case deliveryReceipts = "delivery_receipts"
            case readReceipts = "read_receipts"
        }
    }

    struct User: Encodable, Sendable {
        let id: String
        let privacySettings: Privacy

        enum CodingKeys: String, CodingKey {
            case id
            case privacySettings = "privacy_settings"
        }
    }

    let user: User
}
