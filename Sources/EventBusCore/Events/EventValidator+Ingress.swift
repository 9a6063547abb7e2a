extension EventValidator {
    static let timestampRule = "must be an RFC 3339 UTC time with three fraction digits, like 2026-11-22T03:10:00.123Z"
    static let idRule = "must match [A-Za-z0-9_!.@-]{1,128}"
    static let cidRule = "must be TYPE:ID, TYPE [a-z0-9_-]{1,64}, ID [A-Za-z0-9_!.@-]{1,128}"
    static let typeNameRule = "must match [a-z0-9_-]{1,64}"

    /// Decodes and validates `data` for an ingress `type`.
    static func ingressPayload(_ type: EventType, data: JSONValue) throws(EventValidationError) -> IngressPayload {
        switch type {
        case .channelCreated:
            let cid = try cid(data["cid"], "data.cid")
            guard let members = try userIDs(data["members"], "data.members") else { throw bad("data.members: required") }
            return .channelCreated(cid: cid, members: members)
        case .memberAdded:
            return .memberAdded(cid: try cid(data["cid"], "data.cid"), userID: try userID(data["user_id"], "data.user_id"))
        case .memberRemoved:
            return .memberRemoved(
                cid: try cid(data["cid"], "data.cid"), userID: try userID(data["user_id"], "data.user_id"))
        case .memberUpdated:
            let cid = try cid(data["cid"], "data.cid")
            let user = try userID(data["user_id"], "data.user_id")
            let muted = try bool(data["muted"], "data.muted")
            var countUnread: CountPreference?
            if let value = data["count_unread"] {
                guard case .string(let text) = value, let parsed = CountPreference(rawValue: text) else {
                    throw bad("data.count_unread: must be \"all\", \"mentions\" or \"off\"")
                }
                countUnread = parsed
            }
            return .memberUpdated(cid: cid, userID: user, muted: muted, countUnread: countUnread)
        case .messageNew:
            let cid = try cid(data["cid"], "data.cid")
            guard let message = data["message"] else { throw bad("data.message: required") }
            guard case .object = message else { throw bad("data.message: must be an object") }
            let id = try messageID(message["id"], "data.message.id")
            let sender = try userID(message["user_id"], "data.message.user_id")
            guard let createdAt = try timestamp(message["created_at"], "data.message.created_at") else {
                throw bad("data.message.created_at: required")
            }
            var kind = NewMessage.Kind.regular
            if let kindValue = message["type"] {
                guard case .string(let kindText) = kindValue, let parsed = NewMessage.Kind(rawValue: kindText) else {
                    throw bad("data.message.type: must be \"regular\" or \"system\"")
                }
                kind = parsed
            }
            let silent = try bool(message["silent"], "data.message.silent") ?? false
            let mentioned = try userIDs(message["mentioned_users"], "data.message.mentioned_users") ?? []
            let parent = try message["parent_id"].map { value throws(EventValidationError) in
                try messageID(value, "data.message.parent_id")
            }
            let shown = try bool(message["show_in_channel"], "data.message.show_in_channel") ?? false
            return .messageNew(
                cid: cid,
                message: NewMessage(
                    id: id, userID: sender, createdAt: createdAt, kind: kind, silent: silent, mentionedUsers: mentioned,
                    parentID: parent, showInChannel: shown))
        case .messageDeleted:
            return .messageDeleted(
                cid: try cid(data["cid"], "data.cid"), messageID: try messageID(data["message_id"], "data.message_id"))
        case .messageDelivered:
            return .messageDelivered(
                cid: try cid(data["cid"], "data.cid"), userID: try userID(data["user_id"], "data.user_id"),
                messageID: try messageID(data["message_id"], "data.message_id"),
                deliveredAt: try timestamp(data["delivered_at"], "data.delivered_at"))
        case .messageRead:
            return .messageRead(
                cid: try cid(data["cid"], "data.cid"), userID: try userID(data["user_id"], "data.user_id"),
                messageID: try messageID(data["message_id"], "data.message_id"),
                readAt: try timestamp(data["read_at"], "data.read_at"))
        case .notificationMarkRead:
            return .notificationMarkRead(
                cid: try cid(data["cid"], "data.cid"), userID: try userID(data["user_id"], "data.user_id"),
                readAt: try timestamp(data["read_at"], "data.read_at"))
        case .notificationMarkUnread:
            return .notificationMarkUnread(
                cid: try cid(data["cid"], "data.cid"), userID: try userID(data["user_id"], "data.user_id"),
                messageID: try messageID(data["message_id"], "data.message_id"))
        case .notificationMarkAllRead:
            return .notificationMarkAllRead(
                userID: try userID(data["user_id"], "data.user_id"), readAt: try timestamp(data["read_at"], "data.read_at"))
        case .userUpdated:
            guard let user = data["user"] else { throw bad("data.user: required") }
            guard case .object = user else { throw bad("data.user: must be an object") }
            let id = try userID(user["id"], "data.user.id")
            var delivery: Bool?
            var read: Bool?
            if let settings = user["privacy_settings"] {
                guard case .object = settings else { throw bad("data.user.privacy_settings: must be an object") }
                delivery = try receiptSetting(
                    settings["delivery_receipts"], "data.user.privacy_settings.delivery_receipts")
                read = try receiptSetting(settings["read_receipts"], "data.user.privacy_settings.read_receipts")
            }
            return .userUpdated(userID: id, deliveryReceipts: delivery, readReceipts: read)
        case .channelTypeUpdated:
            let nameText = try requiredString(data["name"], "data.name")
            guard Identifier.isValidChannelTypeName(nameText) else { throw bad("data.name: \(typeNameRule)") }
            return .channelTypeUpdated(
                name: nameText, deliveryEvents: try bool(data["delivery_events"], "data.delivery_events"),
                readEvents: try bool(data["read_events"], "data.read_events"))
        case .channelTruncated:
            let cid = try cid(data["cid"], "data.cid")
            let message = try data["message_id"].map { value throws(EventValidationError) in
                try messageID(value, "data.message_id")
            }
            return .channelTruncated(cid: cid, messageID: message)
        case .channelHidden:
            return .channelHidden(
                cid: try cid(data["cid"], "data.cid"), userID: try userID(data["user_id"], "data.user_id"),
                clearHistory: try bool(data["clear_history"], "data.clear_history") ?? false)
        case .channelVisible:
            return .channelVisible(cid: try cid(data["cid"], "data.cid"), userID: try userID(data["user_id"], "data.user_id"))
        case .channelDeleted:
            return .channelDeleted(cid: try cid(data["cid"], "data.cid"))
        case .userDeleted:
            return .userDeleted(
                userID: try userID(data["user_id"], "data.user_id"),
                hard: try bool(data["hard_delete"], "data.hard_delete") ?? false)
        case .userBanned, .userUnbanned:
            let user = try userID(data["user_id"], "data.user_id")
            let channel = try data["cid"].map { value throws(EventValidationError) in try cid(value, "data.cid") }
            return type == .userBanned ? .userBanned(userID: user, cid: channel) : .userUnbanned(userID: user, cid: channel)
        case .receiptRejected, .receiptSuppressed, .query, .reply:
            throw EventValidationError(code: .unknownType, message: "type: \"\(type.rawValue)\" is not an ingress type")
        }
    }

    // MARK: - Field rules

    static func cid(_ value: JSONValue?, _ path: String) throws(EventValidationError) -> String {
        let text = try requiredString(value, path)
        guard Identifier.isValidCID(text) else { throw bad("\(path): \(cidRule)") }
        return text
    }

    static func userID(_ value: JSONValue?, _ path: String) throws(EventValidationError) -> String {
        let text = try requiredString(value, path)
        guard Identifier.isValidUserID(text) else { throw bad("\(path): \(userIDProblem(text))") }
        return text
    }

    static func userIDProblem(_ text: String) -> String {
        text.utf8.first == UInt8(ascii: "@") && Identifier.isValidMessageID(text) ? "must not start with @" : idRule
    }

    /// An optional array of user ids (errors name `path[i]`); `nil` when the key is absent.
    static func userIDs(_ value: JSONValue?, _ path: String) throws(EventValidationError) -> [String]? {
        guard let value else { return nil }
        guard case .array(let elements) = value else { throw bad("\(path): must be an array") }
        var ids: [String] = []
        ids.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard case .string(let userID) = element else { throw bad("\(path)[\(index)]: must be a string") }
            guard Identifier.isValidUserID(userID) else { throw bad("\(path)[\(index)]: \(userIDProblem(userID))") }
            ids.append(userID)
        }
        return ids
    }

    static func messageID(_ value: JSONValue?, _ path: String) throws(EventValidationError) -> String {
        let text = try requiredString(value, path)
        guard Identifier.isValidMessageID(text) else { throw bad("\(path): \(idRule)") }
        return text
    }

    /// An optional strict timestamp; `nil` when the key is absent.
    static func timestamp(_ value: JSONValue?, _ path: String) throws(EventValidationError) -> String? {
        guard let text = try optionalString(value, path) else { return nil }
        guard Identifier.isValidTimestamp(text) else { throw bad("\(path): \(timestampRule)") }
        return text
    }

    /// An optional boolean; `nil` when the key is absent.
    static func bool(_ value: JSONValue?, _ path: String) throws(EventValidationError) -> Bool? {
        guard let value else { return nil }
        guard case .bool(let flag) = value else { throw bad("\(path): must be a boolean") }
        return flag
    }

    /// An optional `{"enabled": Bool}` object; `nil` when the key is absent.
    static func receiptSetting(_ value: JSONValue?, _ path: String) throws(EventValidationError) -> Bool? {
        guard let value else { return nil }
        guard case .object = value else { throw bad("\(path): must be an object") }
        guard let enabled = value["enabled"] else { throw bad("\(path).enabled: required") }
        guard case .bool(let flag) = enabled else { throw bad("\(path).enabled: must be a boolean") }
        return flag
    }
}
