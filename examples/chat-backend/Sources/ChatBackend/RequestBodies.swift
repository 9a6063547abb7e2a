import EventBus

/// `POST /channels`.
struct CreateChannelBody: Decodable {
    let cid: String
    let members: [String]
}

/// `POST /channels/{cid}/members`.
struct AddMemberBody: Decodable {
    let userID: String

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
    }
}

/// `POST /channels/{cid}/messages`.
struct SendMessageBody: Decodable {
    let userID: String
    let text: String
    let id: String?
    let type: String?
    let silent: Bool?
    /// A reply in the thread of this message.
    let parentID: String?
    let showInChannel: Bool?

    enum CodingKeys: String, CodingKey {
        case text, id, type, silent
        case userID = "user_id"
        case parentID = "parent_id"
        case showInChannel = "show_in_channel"
    }
}

/// `POST /channels/{cid}/delivered`, `/read` and `/unread`.
struct AckBody: Decodable {
    let userID: String
    let messageID: String?

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case messageID = "message_id"
    }
}

/// `PUT /channels/{cid}/members/{user_id}/settings`.
struct MemberSettingsBody: Decodable {
    let muted: Bool?
    let countUnread: String?

    enum CodingKeys: String, CodingKey {
        case muted
        case countUnread = "count_unread"
    }
}

/// `PUT /users/{user_id}/privacy`.
struct PrivacyBody: Decodable {
    let deliveryReceipts: Bool?
    let readReceipts: Bool?

    enum CodingKeys: String, CodingKey {
        case deliveryReceipts = "delivery_receipts"
        case readReceipts = "read_receipts"
    }
}

/// The identifier checks of docs/events.md, each naming the request field.
enum Check {
    static func cid(_ value: String, field: String = "cid") throws(APIError) -> String {
        guard Identifier.isValidCID(value) else { throw .badField(field, "must be TYPE:ID, such as messaging:general") }
        return value
    }

    static func userID(_ value: String, field: String = "user_id") throws(APIError) -> String {
        guard Identifier.isValidUserID(value) else {
            throw .badField(field, "must match [A-Za-z0-9_!.@-]{1,128} and not start with @")
        }
        return value
    }

    static func messageID(_ value: String, field: String = "message_id") throws(APIError) -> String {
        guard Identifier.isValidMessageID(value) else { throw .badField(field, "must match [A-Za-z0-9_!.@-]{1,128}") }
        return value
    }
}
