import Hummingbird

/// The read side: the `receipts` service's queries.
extension ChatBackend {
    struct UnreadParams: Encodable {
        let userID: String

        enum CodingKeys: String, CodingKey {
            case userID = "user_id"
        }
    }

    struct ReceiptsParams: Encodable {
        let cid: String
        let messageID: String?
        let viewer: String
        let pageSize: Int?
        let cursor: String?

        enum CodingKeys: String, CodingKey {
            case cid, viewer, cursor
            case messageID = "message_id"
            case pageSize = "page_size"
        }
    }

    func addQueryRoutes(to router: Router<BasicRequestContext>) {
        // GET /users/{user_id}/unread -> unread_counts
        router.get("/users/:user_id/unread") { _, context in
            let userID = try Check.userID(try Self.parameter("user_id", context))
            return try await query("unread_counts", params: UnreadParams(userID: userID))
        }
        // GET /channels/{cid}/messages/{message_id}/receipts?viewer=U[&page_size=N&cursor=C] -> message_receipts
        router.get("/channels/:cid/messages/:message_id/receipts") { request, context in
            let cid = try Check.cid(try Self.parameter("cid", context))
            let messageID = try Check.messageID(try Self.parameter("message_id", context))
            return try await query("message_receipts", params: try Self.pagedParams(request, cid: cid, messageID: messageID))
        }
        // GET /channels/{cid}/state?viewer=U[&page_size=N&cursor=C] -> channel_state
        router.get("/channels/:cid/state") { request, context in
            let cid = try Check.cid(try Self.parameter("cid", context))
            return try await query("channel_state", params: try Self.pagedParams(request, cid: cid, messageID: nil))
        }
    }

    /// The `viewer`, `page_size` and `cursor` query parameters, checked.
    static func pagedParams(_ request: Request, cid: String, messageID: String?) throws(APIError) -> ReceiptsParams {
        let query = request.uri.queryParameters
        guard let viewer = query["viewer"].map(String.init) else { throw .badField("viewer", "required: who is asking") }
        var pageSize: Int?
        if let text = query["page_size"] {
            guard let value = Int(text), value > 0 else { throw .badField("page_size", "must be a positive integer") }
            pageSize = value
        }
        return ReceiptsParams(
            cid: cid, messageID: messageID, viewer: try Check.userID(viewer, field: "viewer"),
            pageSize: pageSize, cursor: query["cursor"].map(String.init))
    }
}
