import Foundation
import Hummingbird

/// Messages: `message.new`, `message.deleted`, and the texts kept in memory.
extension ChatBackend {
    struct MessageReply: Encodable {
        let message: StoredMessage
        let seq: UInt64
    }

    struct MessagesReply: Encodable {
        let messages: [StoredMessage]
    }

    func addMessageRoutes(to router: Router<BasicRequestContext>) {
        // POST /channels/{cid}/messages {"user_id", "text", "id"?, "type"?, "silent"?, "parent_id"?,
        // "show_in_channel"?} -> message.new (with parent_id: a reply in that message's thread)
        router.post("/channels/:cid/messages") { request, context in
            let key = try Self.idempotencyKey(request)
            let cid = try Check.cid(try Self.parameter("cid", context))
            let body = try await Self.decode(SendMessageBody.self, from: request)
            let userID = try Check.userID(body.userID)
            guard !body.text.isEmpty else { throw APIError.badField("text", "must not be empty") }
            if let type = body.type, type != "regular", type != "system" {
                throw APIError.badField("type", "must be regular or system")
            }
            // The message id: the client's, else derived from its idempotency key (a retry
            // names the same message), else a new one.
            let messageID = try body.id.map { try Check.messageID($0, field: "id") }
                ?? key.map { "m-\($0)" } ?? "m-\(UUID().uuidString.lowercased())"
            let parentID = try body.parentID.map { try Check.messageID($0, field: "parent_id") }
            if parentID == nil, body.showInChannel != nil { throw APIError.badField("show_in_channel", "only for a reply (parent_id)") }
            // 1. Store the message. A retry finds the stored one, with its first created_at.
            var stored = StoredMessage(
                id: messageID, userID: userID, createdAt: Date().busTimestamp, text: body.text, type: body.type, silent: body.silent)
            stored.parentID = parentID
            stored.showInChannel = parentID == nil ? nil : body.showInChannel ?? false
            let message = await store.insert(stored, cid: cid)
            // 2. Publish message.new and wait for the confirm; 3. answer.
            let seq = try await publish(
                type: "message.new", subject: cid, data: MessageNew(cid: cid, message: message),
                id: Self.eventID("message.new", naming: cid, messageID))
            return try JSONResponse.make(MessageReply(message: message, seq: seq), status: .created)
        }
        // GET /channels/{cid}/messages -> the stored messages, oldest first
        router.get("/channels/:cid/messages") { _, context in
            let cid = try Check.cid(try Self.parameter("cid", context))
            return try JSONResponse.make(MessagesReply(messages: await store.messages(in: cid)))
        }
        // DELETE /channels/{cid}/messages/{message_id} -> message.deleted
        router.delete("/channels/:cid/messages/:message_id") { request, context in
            _ = try Self.idempotencyKey(request)  // checked; the id derives from the message anyway
            let cid = try Check.cid(try Self.parameter("cid", context))
            let messageID = try Check.messageID(try Self.parameter("message_id", context))
            let seq = try await publish(
                type: "message.deleted", subject: cid, data: MessageDeleted(cid: cid, messageID: messageID),
                id: Self.eventID("message.deleted", naming: cid, messageID))
            await store.remove(messageID, cid: cid)
            return try JSONResponse.make(SeqReply(seq: seq))
        }
    }
}
