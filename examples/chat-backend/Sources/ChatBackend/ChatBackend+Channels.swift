import Hummingbird

/// Channels and members: `channel.created`, `member.added`, `member.updated`, `member.removed`.
extension ChatBackend {
    struct ChannelReply: Encodable {
        let cid: String
        let members: [String]
        let seq: UInt64
    }

    struct SeqReply: Encodable {
        let seq: UInt64
    }

    func addChannelRoutes(to router: Router<BasicRequestContext>) {
        // POST /channels {"cid", "members"} -> channel.created
        router.post("/channels") { request, _ in
            let key = try Self.idempotencyKey(request)
            let body = try await Self.decode(CreateChannelBody.self, from: request)
            let cid = try Check.cid(body.cid)
            for (index, member) in body.members.enumerated() { _ = try Check.userID(member, field: "members[\(index)]") }
            let seq = try await publish(
                type: "channel.created", subject: cid, data: ChannelCreated(cid: cid, members: body.members),
                id: Self.eventID("channel.created", key: key))
            return try JSONResponse.make(ChannelReply(cid: cid, members: body.members, seq: seq), status: .created)
        }
        // POST /channels/{cid}/members {"user_id"} -> member.added
        router.post("/channels/:cid/members") { request, context in
            let key = try Self.idempotencyKey(request)
            let cid = try Check.cid(try Self.parameter("cid", context))
            let body = try await Self.decode(AddMemberBody.self, from: request)
            let userID = try Check.userID(body.userID)
            let seq = try await publish(
                type: "member.added", subject: cid, data: MemberChange(cid: cid, userID: userID),
                id: Self.eventID("member.added", key: key))
            return try JSONResponse.make(SeqReply(seq: seq))
        }
        // PUT /channels/{cid}/members/{user_id}/settings {"muted"?, "count_unread"?} -> member.updated
        router.put("/channels/:cid/members/:user_id/settings") { request, context in
            let key = try Self.idempotencyKey(request)
            let cid = try Check.cid(try Self.parameter("cid", context))
            let userID = try Check.userID(try Self.parameter("user_id", context))
            let body = try await Self.decode(MemberSettingsBody.self, from: request)
            guard body.muted != nil || body.countUnread != nil else {
                throw APIError.badField("muted", "give muted (a boolean) or count_unread")
            }
            if let count = body.countUnread, !["all", "mentions", "off"].contains(count) {
                throw APIError.badField("count_unread", "must be all, mentions or off")
            }
            let seq = try await publish(
                type: "member.updated", subject: cid,
                data: MemberUpdated(cid: cid, userID: userID, muted: body.muted, countUnread: body.countUnread),
                id: Self.eventID("member.updated", key: key))
            return try JSONResponse.make(SeqReply(seq: seq))
        }
        // DELETE /channels/{cid}/members/{user_id} -> member.removed
        router.delete("/channels/:cid/members/:user_id") { request, context in
            let key = try Self.idempotencyKey(request)
            let cid = try Check.cid(try Self.parameter("cid", context))
            let userID = try Check.userID(try Self.parameter("user_id", context))
            let seq = try await publish(
                type: "member.removed", subject: cid, data: MemberChange(cid: cid, userID: userID),
                id: Self.eventID("member.removed", key: key))
            return try JSONResponse.make(SeqReply(seq: seq))
        }
    }
}
