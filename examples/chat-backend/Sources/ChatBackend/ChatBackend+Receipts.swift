import Hummingbird

/// Acks and settings: `message.delivered`, `message.read`, `notification.mark_read`,
/// `notification.mark_unread`, `user.updated`.
extension ChatBackend {
    func addReceiptRoutes(to router: Router<BasicRequestContext>) {
        // POST /channels/{cid}/delivered {"user_id", "message_id"} -> message.delivered
        router.post("/channels/:cid/delivered") { request, context in
            try await ack(request, context, type: "message.delivered", needsMessage: true)
        }
        // POST /channels/{cid}/read {"user_id", "message_id"?} -> message.read, or notification.mark_read without message_id
        router.post("/channels/:cid/read") { request, context in
            try await ack(request, context, type: "message.read", needsMessage: false)
        }
        // POST /channels/{cid}/unread {"user_id", "message_id"} -> notification.mark_unread
        router.post("/channels/:cid/unread") { request, context in
            try await ack(request, context, type: "notification.mark_unread", needsMessage: true)
        }
        // PUT /users/{user_id}/privacy {"delivery_receipts"?, "read_receipts"?} -> user.updated
        router.put("/users/:user_id/privacy") { request, context in
            let key = try Self.idempotencyKey(request)
            let userID = try Check.userID(try Self.parameter("user_id", context))
            let body = try await Self.decode(PrivacyBody.self, from: request)
            guard body.deliveryReceipts != nil || body.readReceipts != nil else {
                throw APIError.badField("read_receipts", "give delivery_receipts or read_receipts (a boolean)")
            }
            let privacy = UserUpdated.Privacy(
                deliveryReceipts: body.deliveryReceipts.map { .init(enabled: $0) },
                readReceipts: body.readReceipts.map { .init(enabled: $0) })
            let seq = try await publish(
                type: "user.updated", subject: "@\(userID)",
                data: UserUpdated(user: .init(id: userID, privacySettings: privacy)),
                id: Self.eventID("user.updated", key: key))
            return try JSONResponse.make(SeqReply(seq: seq))
        }
    }

    /// One ack: `type`, or `notification.mark_read` for a read without `message_id`.
    private func ack(_ request: Request, _ context: BasicRequestContext, type: String, needsMessage: Bool) async throws -> Response {
        let key = try Self.idempotencyKey(request)
        let cid = try Check.cid(try Self.parameter("cid", context))
        let body = try await Self.decode(AckBody.self, from: request)
        let userID = try Check.userID(body.userID)
        let messageID = try body.messageID.map { try Check.messageID($0) }
        if needsMessage, messageID == nil { throw APIError.badField("message_id", "required") }
        let eventType = messageID == nil ? "notification.mark_read" : type
        let seq = try await publish(
            type: eventType, subject: cid, data: Ack(cid: cid, userID: userID, messageID: messageID),
            id: Self.eventID(eventType, key: key))
        return try JSONResponse.make(SeqReply(seq: seq))
    }
}
