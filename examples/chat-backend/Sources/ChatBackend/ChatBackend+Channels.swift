import Hummingbird

/// Channels and members: `channel.created`, `member.added`, `member.removed`.
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
