import EventBus

/// The `receipts` service's methods (SPEC.md "Queries"). The reducer hides
/// nothing: every field is present and `hidden_member_count` is 0; the privacy
/// filters redact replies for their viewer afterwards.
extension ReceiptReducer {
    /// Answers a query; returns the reply's result object as JSON bytes.
    ///
    /// - Parameters:
    ///   - method: `channel_state`, `unread_counts` or `message_receipts`.
    ///   - params: the params object.
    /// - Throws: `bad_request` for an unknown method or a bad param (the message
    ///   names it, `params.cid: required`), `not_found` for an unknown channel or message.
    public func query(method: String, params: JSONValue) throws(QueryError) -> [UInt8] {
        guard case .object = params else { throw .badRequest("params: must be an object") }
        switch method {
        case "channel_state":
            return try channelState(params)
        case "unread_counts":
            return try unreadCounts(params)
        case "message_receipts":
            return try messageReceipts(params)
        default:
            throw .badRequest("method: unknown method \"\(method)\"; expected channel_state, unread_counts or message_receipts")
        }
    }

    // MARK: Params

    private static func string(
        _ params: JSONValue, _ name: String, _ isValid: (String) -> Bool, _ rule: String
    ) throws(QueryError) -> String? {
        guard let value = params[name], value != .null else { return nil }
        guard case .string(let text) = value else { throw .badRequest("params.\(name): must be a string") }
        guard isValid(text) else { throw .badRequest("params.\(name): \(rule)") }
        return text
    }

    private static func required(
        _ params: JSONValue, _ name: String, _ isValid: (String) -> Bool, _ rule: String
    ) throws(QueryError) -> String {
        guard let text = try string(params, name, isValid, rule) else { throw .badRequest("params.\(name): required") }
        return text
    }

    private static let cidRule = "must be TYPE:ID, TYPE [a-z0-9_-]{1,64}, ID [A-Za-z0-9_!.@-]{1,128}"
    private static let idRule = "must match [A-Za-z0-9_!.@-]{1,128}"
    private static let userRule = "must match [A-Za-z0-9_!.@-]{1,128} and not start with @"

    private func channel(_ params: JSONValue) throws(QueryError) -> Int {
        let cid = try Self.required(params, "cid", Identifier.isValidCID, Self.cidRule)
        guard let ci = channelIndex[cid] else { throw .notFound("params.cid: no channel \(cid)") }
        return Int(ci)
    }

    private func writeOptional(_ writer: inout JSONWriter, _ text: String?) {
        if let text { writer.string(text) } else { writer.null() }
    }

    // MARK: Methods

    /// `channel_state {cid, viewer}`: every current member, sorted by user id.
    private func channelState(_ params: JSONValue) throws(QueryError) -> [UInt8] {
        let ci = try channel(params)
        _ = try Self.required(params, "viewer", Identifier.isValidUserID, Self.userRule)
        let channel = channels[ci]
        let current = channel.members.filter(\.isMember).sorted { users[Int($0.user)] < users[Int($1.user)] }
        var writer = JSONWriter(capacity: 64 + current.count * 192)
        writer.beginObject()
        writer.key("cid"); writer.string(channel.cid)
        writer.key("members")
        writer.beginArray()
        for record in current {
            writer.beginObject()
            writer.key("user_id"); writer.string(users[Int(record.user)])
            writer.key("last_read"); writeOptional(&writer, times.decode(record.readTime))
            writer.key("last_read_message_id"); writeOptional(&writer, channel.messageID(at: record.readPosition))
            writer.key("unread_messages"); writer.int(channel.unread(after: record.readPosition, user: record.user))
            writer.key("last_delivered_at"); writeOptional(&writer, times.decode(record.deliveredTime))
            writer.key("last_delivered_message_id")
            writeOptional(&writer, channel.messageID(at: record.deliveredPosition))
            writer.endObject()
        }
        writer.endArray()
        writer.key("hidden_member_count"); writer.int(0)
        writer.endObject()
        return writer.bytes
    }

    /// `unread_counts {user_id}`: totals over the user's channels and the channels with unread, by cid.
    /// An unknown user has no unread (zeros, no channels).
    private func unreadCounts(_ params: JSONValue) throws(QueryError) -> [UInt8] {
        let userID = try Self.required(params, "user_id", Identifier.isValidUserID, Self.userRule)
        var rows: [(cid: String, unread: Int, lastRead: String?, first: String)] = []
        if let user = userIndex[userID] {
            for ci in userChannels[Int(user)] {
                let channel = channels[Int(ci)]
                // userChannels lists only channels where the user has a slot.
                let record = channel.members[Int(channel.slots[user]!)]
                let unread = channel.unread(after: record.readPosition, user: user)
                guard unread > 0, let first = channel.firstUnread(after: record.readPosition, user: user) else {
                    continue
                }
                rows.append((channel.cid, unread, times.decode(record.readTime), channel.messageIDs[Int(first)]))
            }
        }
        rows.sort { $0.cid < $1.cid }
        var writer = JSONWriter(capacity: 64 + rows.count * 128)
        writer.beginObject()
        writer.key("total_unread_count"); writer.int(rows.reduce(0) { $0 + $1.unread })
        writer.key("unread_channels"); writer.int(rows.count)
        writer.key("channels")
        writer.beginArray()
        for row in rows {
            writer.beginObject()
            writer.key("cid"); writer.string(row.cid)
            writer.key("unread_messages"); writer.int(row.unread)
            writer.key("last_read"); writeOptional(&writer, row.lastRead)
            writer.key("first_unread_message_id"); writer.string(row.first)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.bytes
    }

    /// `message_receipts {cid, message_id, viewer, page_size?, cursor?}`: counts
    /// over the current members other than the sender, in O(log n); readers
    /// furthest read first (then by user id), paged in O(log n + page).
    private func messageReceipts(_ params: JSONValue) throws(QueryError) -> [UInt8] {
        let ci = try channel(params)
        let messageID = try Self.required(params, "message_id", Identifier.isValidMessageID, Self.idRule)
        _ = try Self.required(params, "viewer", Identifier.isValidUserID, Self.userRule)
        var pageSize = 50
        if let value = params["page_size"], value != .null {
            guard let size = value.int64Value, (1...100).contains(size) else {
                throw .badRequest("params.page_size: must be an integer from 1 to 100")
            }
            pageSize = Int(size)
        }
        let cursorText = try Self.string(params, "cursor", { _ in true }, "")
        let cursor: ReaderCursor?
        if let cursorText {
            guard let parsed = ReaderCursor(cursorText) else {
                throw .badRequest("params.cursor: not a cursor this service returned")
            }
            cursor = parsed
        } else {
            cursor = nil
        }
        let channel = channels[ci]
        guard let position = channel.messageIndex.position(of: messageID, in: channel.messageIDs) else {
            throw .notFound("params.message_id: no message \(messageID) in \(channel.cid)")
        }
        let sender = channel.sender(at: position)
        let senderRecord = channel.currentSlot(of: sender).map { channel.members[Int($0)] }
        let others = channel.memberCount - (senderRecord == nil ? 0 : 1)
        var readCount = channel.memberCount - channel.reads.prefix(Int(position) + 1)
        var deliveredCount = channel.memberCount - channel.delivered.prefix(Int(position) + 1)
        if let senderRecord {
            if senderRecord.readPosition >= position { readCount -= 1 }
            if senderRecord.deliveredPosition >= position { deliveredCount -= 1 }
        }

        var writer = JSONWriter(capacity: 160 + pageSize * 64)
        writer.beginObject()
        writer.key("read_count"); writer.int(readCount)
        writer.key("delivered_count"); writer.int(deliveredCount)
        writer.key("unread_member_count"); writer.int(others - readCount)
        writer.key("undelivered_member_count"); writer.int(others - deliveredCount)
        writer.key("hidden_member_count"); writer.int(0)
        writer.key("readers")
        writer.beginArray()
        let readers = channel.readers
        var index =
            cursor.map { readers.bound($0.position, $0.userID, strict: true, users) }
            ?? ReaderList.Index(chunk: 0, offset: 0)
        var written = 0
        var last: ReaderList.Entry?
        var nextCursor: String?
        while let entry = readers.entry(at: index), entry.position >= position {
            if entry.user != sender {
                if written == pageSize {
                    // A page is full and another reader follows: the cursor is the last written one.
                    nextCursor = last.map { ReaderCursor(position: $0.position, userID: users[Int($0.user)]).text }
                    break
                }
                let record = channel.members[Int(channel.slots[entry.user]!)]  // readers are current members
                writer.beginObject()
                writer.key("user_id"); writer.string(users[Int(entry.user)])
                writer.key("last_read"); writeOptional(&writer, times.decode(record.readTime))
                writer.endObject()
                written += 1
                last = entry
            }
            index = readers.index(after: index)
        }
        writer.endArray()
        writer.key("next_cursor"); writeOptional(&writer, nextCursor)
        writer.endObject()
        return writer.bytes
    }
}

/// A position in the readers' order: the last reader of a page. Stable under
/// concurrent reads — a reader who moves on past the cursor is not repeated,
/// nobody else is skipped or repeated.
struct ReaderCursor: Sendable, Equatable {
    /// The read position of the last reader returned.
    var position: Int32
    /// Their user id.
    var userID: String

    init(position: Int32, userID: String) {
        self.position = position
        self.userID = userID
    }

    /// Parses `r<position>:<user_id>`.
    init?(_ text: String) {
        guard text.first == "r", let colon = text.firstIndex(of: ":"),
            let position = Int32(text[text.index(after: text.startIndex)..<colon]), position >= -1
        else { return nil }
        let userID = String(text[text.index(after: colon)...])
        guard Identifier.isValidUserID(userID) else { return nil }
        self.position = position
        self.userID = userID
    }

    /// The opaque text handed to clients.
    var text: String { "r\(position):\(userID)" }
}
