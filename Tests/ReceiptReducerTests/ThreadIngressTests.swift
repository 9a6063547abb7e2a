import EventBusCore
import Testing

/// `message.new`'s thread fields at stage `in` (docs/events.md "message.new"):
/// `parent_id` a message id, `show_in_channel` a boolean, both optional; the
/// broker's fast path and its full parse agree (the bytes and the parsed tree
/// give the same answer).
@Suite struct ThreadIngressTests {
    static func event(_ message: String) -> String {
        """
        {"specversion":"1.0","id":"e1","source":"/chat-api","type":"message.new","subject":"messaging:team",\
        "time":"2026-11-22T09:00:00.000Z","data":{"cid":"messaging:team","message":{"id":"r1","user_id":"bob",\
        "created_at":"2026-11-22T09:00:00.000Z"\(message)}}}
        """
    }

    /// The payload, or the error, from the bytes and from the parsed tree.
    static func validate(_ text: String) -> (bytes: Result<IngressPayload?, EventValidationError>,
                                              tree: Result<IngressPayload?, EventValidationError>) {
        let bytes = Result { () throws(EventValidationError) in try EventValidator.validate(Array(text.utf8), stage: "in").payload }
        let tree = Result { () throws(EventValidationError) in
            try EventValidator.validate((try? JSONParser.parse(Array(text.utf8))) ?? .null, stage: "in").payload
        }
        return (bytes, tree)
    }

    @Test func aReplyCarriesItsParentAndWhetherTheChannelShowsIt() throws {
        let both = Self.validate(Self.event(#","parent_id":"m4","show_in_channel":true"#))
        let want = IngressPayload.messageNew(cid: "messaging:team", message: NewMessage(
            id: "r1", userID: "bob", createdAt: "2026-11-22T09:00:00.000Z", parentID: "m4", showInChannel: true))
        #expect(try both.bytes.get() == want)
        #expect(try both.tree.get() == want)
        let plain = Self.validate(Self.event(""))
        #expect(try plain.bytes.get() == .messageNew(cid: "messaging:team", message: NewMessage(
            id: "r1", userID: "bob", createdAt: "2026-11-22T09:00:00.000Z")))
    }

    @Test(arguments: [
        (#","parent_id":5"#, "data.message.parent_id: must be a string"),
        (#","parent_id":"m 4""#, "data.message.parent_id: must match [A-Za-z0-9_!.@-]{1,128}"),
        (#","parent_id":null"#, "data.message.parent_id: must be a string"),
        (#","show_in_channel":"yes""#, "data.message.show_in_channel: must be a boolean"),
    ])
    func aBadThreadFieldIsRefusedNamingIt(field: String, message: String) {
        let both = Self.validate(Self.event(field))
        for result in [both.bytes, both.tree] {
            guard case .failure(let error) = result else {
                Issue.record("\(field) was accepted")
                continue
            }
            #expect(error.message == message, "\(field)")
        }
    }
}
