import Testing
@testable import EventBus
@testable import EventBusCore

/// Builds an event's JSON text from an envelope override and a `data` text.
private func event(
    type: String = "message.read", subject: String = "messaging:general",
    data: String? = #"{"cid":"messaging:general","user_id":"bob","message_id":"m42"}"#,
    extra: String = #""time":"2026-11-22T03:10:00.123Z""#
) -> String {
    var text = #"{"specversion":"1.0","id":"b7d2c1","source":"/chat-api","type":"\#(type)","subject":"\#(subject)""#
    if !extra.isEmpty { text += "," + extra }
    if let data { text += #","data":"# + data }
    return text + "}"
}

private func validate(_ text: String, stage: String = "in") throws(EventValidationError) -> ValidatedEvent {
    try EventValidator.validate(Array(text.utf8), stage: stage)
}

private func failure(_ text: String, stage: String = "in") -> EventValidationError? {
    failure(Array(text.utf8), stage: stage)
}

private func failure(_ bytes: [UInt8], stage: String = "in") -> EventValidationError? {
    do {
        _ = try EventValidator.validate(bytes, stage: stage)
        return nil
    } catch {
        return error
    }
}

@Suite struct EventValidatorTests {
    // MARK: Good events

    @Test func acceptsTheProtocolExampleAndReadsItsEnvelope() throws {
        let text = #"""
            {"specversion":"1.0","id":"b7d2c1","source":"/chat-api","type":"message.read",
             "time":"2026-11-22T03:10:00.123Z","subject":"messaging:general",
             "data":{"cid":"messaging:general","user_id":"bob","message_id":"m42"}}
            """#
        let validated = try validate(text)
        #expect(validated.envelope.id == "b7d2c1")
        #expect(validated.envelope.source == "/chat-api")
        #expect(validated.envelope.type == "message.read")
        #expect(validated.envelope.eventType == .messageRead)
        #expect(validated.envelope.subject == "messaging:general")
        #expect(validated.envelope.time == "2026-11-22T03:10:00.123Z")
        #expect(validated.envelope.replyto == nil)
        #expect(validated.envelope.data?["user_id"] == .string("bob"))
        #expect(validated.payload == .messageRead(cid: "messaging:general", userID: "bob", messageID: "m42", readAt: nil))
        #expect(validated.envelope.topic(stage: "in") == Array("in/messaging:general/message.read".utf8))
    }

    @Test func acceptsFromARawBuffer() throws {
        let bytes = Array(event().utf8)
        let validated = try bytes.withUnsafeBytes { buffer throws(EventValidationError) in
            try EventValidator.validate(buffer, stage: "in")
        }
        #expect(validated.payload?.type == .messageRead)
    }

    @Test func keepsOtherAttributesAllowedAndIgnored() throws {
        let text = event(extra: #""datacontenttype":"application/json","traceparent":"00-ab-cd-01","x":[1,{"y":null}]"#)
        #expect(try validate(text).payload != nil)
    }

    @Test func allowsUnknownFieldsInsideData() throws {
        let data = #"{"cid":"messaging:general","user_id":"bob","message_id":"m42","client":{"os":"ios"},"n":1}"#
        #expect(try validate(event(data: data)).payload?.cid == "messaging:general")
    }

    @Test func laterStagesCheckTheEnvelopeOnlyAndCarryNoPayload() throws {
        let text = event(
            type: "receipt.rejected", subject: "messaging:general",
            data: #"{"seq":12,"type":"message.read","cid":"messaging:general","reason":"not_member"}"#)
        let validated = try validate(text, stage: "diag")
        #expect(validated.payload == nil)
        #expect(validated.envelope.type == "receipt.rejected")
        // An ingress type after `in` is not re-validated against its table either.
        #expect(try validate(event(data: "{}"), stage: "receipt-reducer").payload == nil)
        // Nor is `time` held to the strict form, nor is `data` required.
        #expect(try validate(event(data: nil, extra: #""time":"yesterday""#), stage: "out").envelope.time == "yesterday")
    }

    @Test func aQueryKeepsItsReplyto() throws {
        let text = event(type: "query", subject: "receipts", data: #"{"method":"unread"}"#, extra: #""replyto":"peer-7:c1""#)
        let validated = try validate(text, stage: "receipts")
        #expect(validated.envelope.replyto == "peer-7:c1")
        #expect(validated.envelope.time == nil)
    }

    @Test func sourceCountsCharactersNotBytes() throws {
        let source = String(repeating: "é", count: 256)  // 512 bytes, 256 characters
        let text = event().replacingFirst(#""source":"/chat-api""#, with: #""source":"\#(source)""#)
        #expect(try validate(text).envelope.source == source)
    }

    // MARK: Not JSON, not an object

    @Test(arguments: [
        (Array("{\"specversion\":\"1.0\",".utf8), "byte 21"),
        ([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D], "byte 2"),
        (Array("".utf8), "byte 0"),
        (Array("{\"id\":\"a\",\"id\":\"b\"}".utf8), "duplicate key \"id\""),
    ] as [([UInt8], String)])
    func refusesInvalidJSONAsBadJSONWithTheOffset(bytes: [UInt8], fragment: String) {
        let error = failure(bytes)
        #expect(error?.code == .badJSON)
        #expect(error?.message.contains(fragment) == true, "\(String(describing: error))")
    }

    @Test(arguments: ["[]", "\"event\"", "42", "null"])
    func refusesJSONThatIsNotAnObjectAsBadEvent(text: String) {
        let error = failure(text)
        #expect(error?.code == .badEvent)
        #expect(error?.message == "event: must be a JSON object")
    }

    // MARK: Envelope rules, at every stage

    @Test(arguments: [
        (#""specversion":"1.0","#, "", "specversion: required"),
        (#""specversion":"1.0""#, #""specversion":"0.3""#, "specversion: must be \"1.0\""),
        (#""specversion":"1.0""#, #""specversion":1.0"#, "specversion: must be a string"),
        (#""id":"b7d2c1","#, "", "id: required"),
        (#""id":"b7d2c1""#, #""id":"""#, "id: must be 1-128 printable ASCII characters"),
        (#""id":"b7d2c1""#, #""id":"tab\there""#, "id: must be 1-128 printable ASCII characters"),
        (#""id":"b7d2c1""#, #""id":"café""#, "id: must be 1-128 printable ASCII characters"),
        (#""id":"b7d2c1""#, #""id":"\#(String(repeating: "x", count: 129))""#,
         "id: must be 1-128 printable ASCII characters"),
        (#""id":"b7d2c1""#, #""id":7"#, "id: must be a string"),
        (#""source":"/chat-api","#, "", "source: required"),
        (#""source":"/chat-api""#, #""source":"""#, "source: must be 1-256 characters"),
        (#""source":"/chat-api""#, #""source":"\#(String(repeating: "s", count: 257))""#,
         "source: must be 1-256 characters"),
        (#""source":"/chat-api""#, #""source":null"#, "source: must be a string"),
        (#""type":"message.read","#, "", "type: required"),
        (#""type":"message.read""#, #""type":"Message.Read""#, "type: must match [a-z][a-z0-9_.]{0,63}"),
        (#""type":"message.read""#, #""type":"message/read""#, "type: must match [a-z][a-z0-9_.]{0,63}"),
        (#""type":"message.read""#, #""type":["message.read"]"#, "type: must be a string"),
        (#","subject":"messaging:general""#, "", "subject: required"),
        (#""subject":"messaging:general""#, #""subject":"""#, "subject: must be 1-256 bytes with no '/'"),
        (#""subject":"messaging:general""#, #""subject":"messaging/general""#,
         "subject: must be 1-256 bytes with no '/'"),
        (#""subject":"messaging:general""#, #""subject":"\#(String(repeating: "é", count: 129))""#,
         "subject: must be 1-256 bytes with no '/'"),
        (#""subject":"messaging:general""#, #""subject":true"#, "subject: must be a string"),
        (#""time":"2026-11-22T03:10:00.123Z""#, #""time":1700000000"#, "time: must be a string"),
        (#""time":"2026-11-22T03:10:00.123Z""#, #""replyto":{}"#, "replyto: must be a string"),
    ])
    func refusesABrokenEnvelopeFieldAtEveryStage(original: String, replacement: String, message: String) {
        let text = event(type: "message.read").replacingFirst(original, with: replacement)
        #expect(text != event(), "the replacement must change the event")
        for stage in ["in", "out", "receipt-reducer"] {
            let error = failure(text, stage: stage)
            #expect(error?.code == .badEvent, "\(stage): \(text)")
            #expect(error?.message == message, "\(stage): \(text)")
        }
    }

    @Test(arguments: ["null", "[]", "\"text\"", "1"])
    func refusesDataThatIsNotAnObjectAtEveryStage(data: String) {
        for stage in ["in", "out"] {
            let error = failure(event(data: data), stage: stage)
            #expect(error?.code == .badEvent)
            #expect(error?.message == "data: must be an object")
        }
    }

    // MARK: Stage `in`: type, data, time

    @Test(arguments: ["receipt.rejected", "receipt.suppressed", "query", "reply", "message.updated", "typing.start"])
    func refusesANonIngressTypeAtStageIn(type: String) {
        let error = failure(event(type: type))
        #expect(error?.code == .unknownType)
        #expect(error?.message == "type: \"\(type)\" is not an ingress type")
    }

    @Test func requiresDataAtStageIn() {
        let error = failure(event(data: nil))
        #expect(error?.code == .badEvent)
        #expect(error?.message == "data: required")
    }

    @Test(arguments: ["2026-11-22T03:10:00Z", "2026-11-22T03:10:00.123+01:00", "2026-02-30T00:00:00.000Z"])
    func requiresAStrictEnvelopeTimeAtStageIn(time: String) {
        let error = failure(event(extra: #""time":"\#(time)""#))
        #expect(error?.code == .badEvent)
        #expect(error?.message.hasPrefix("time: must be an RFC 3339 UTC time") == true)
    }

    @Test func envelopeTimeIsOptionalAtStageIn() throws {
        #expect(try validate(event(extra: "")).envelope.time == nil)
    }

    // MARK: Stage `in`: every ingress type decodes

    @Test(arguments: [
        ("channel.created", "messaging:general", #"{"cid":"messaging:general","members":["alice","bob"]}"#,
         IngressPayload.channelCreated(cid: "messaging:general", members: ["alice", "bob"])),
        ("channel.created", "messaging:empty", #"{"cid":"messaging:empty","members":[]}"#,
         .channelCreated(cid: "messaging:empty", members: [])),
        ("member.added", "messaging:general", #"{"cid":"messaging:general","user_id":"carol"}"#,
         .memberAdded(cid: "messaging:general", userID: "carol")),
        ("member.removed", "messaging:general", #"{"cid":"messaging:general","user_id":"carol"}"#,
         .memberRemoved(cid: "messaging:general", userID: "carol")),
        ("member.updated", "messaging:general", #"{"cid":"messaging:general","user_id":"carol","muted":true}"#,
         .memberUpdated(cid: "messaging:general", userID: "carol", muted: true, countUnread: nil)),
        ("member.updated", "messaging:general", #"{"cid":"messaging:general","user_id":"carol","count_unread":"mentions"}"#,
         .memberUpdated(cid: "messaging:general", userID: "carol", muted: nil, countUnread: .mentions)),
        ("message.new", "messaging:general",
         #"{"cid":"messaging:general","message":{"id":"m3","user_id":"alice","created_at":"2026-11-22T03:10:00.123Z","mentioned_users":["bob","carol"]}}"#,
         .messageNew(cid: "messaging:general",
                     message: NewMessage(id: "m3", userID: "alice", createdAt: "2026-11-22T03:10:00.123Z",
                                         mentionedUsers: ["bob", "carol"]))),
        ("message.new", "messaging:general",
         #"{"cid":"messaging:general","message":{"id":"m1","user_id":"alice","created_at":"2026-11-22T03:10:00.123Z"}}"#,
         .messageNew(cid: "messaging:general",
                     message: NewMessage(id: "m1", userID: "alice", createdAt: "2026-11-22T03:10:00.123Z"))),
        ("message.new", "messaging:general",
         #"{"cid":"messaging:general","message":{"id":"m2","user_id":"sys","created_at":"2026-11-22T03:10:01.000Z","type":"system","silent":true,"text":"hi"}}"#,
         .messageNew(cid: "messaging:general",
                     message: NewMessage(id: "m2", userID: "sys", createdAt: "2026-11-22T03:10:01.000Z",
                                         kind: .system, silent: true))),
        ("message.deleted", "messaging:general", #"{"cid":"messaging:general","message_id":"m1"}"#,
         .messageDeleted(cid: "messaging:general", messageID: "m1")),
        ("message.delivered", "messaging:general",
         #"{"cid":"messaging:general","user_id":"bob","message_id":"m1","delivered_at":"2026-11-22T03:10:02.000Z"}"#,
         .messageDelivered(cid: "messaging:general", userID: "bob", messageID: "m1",
                           deliveredAt: "2026-11-22T03:10:02.000Z")),
        ("message.delivered", "messaging:general", #"{"cid":"messaging:general","user_id":"bob","message_id":"m1"}"#,
         .messageDelivered(cid: "messaging:general", userID: "bob", messageID: "m1", deliveredAt: nil)),
        ("message.read", "messaging:general",
         #"{"cid":"messaging:general","user_id":"bob","message_id":"m1","read_at":"2026-11-22T03:10:03.000Z"}"#,
         .messageRead(cid: "messaging:general", userID: "bob", messageID: "m1", readAt: "2026-11-22T03:10:03.000Z")),
        ("notification.mark_read", "messaging:general", #"{"cid":"messaging:general","user_id":"bob"}"#,
         .notificationMarkRead(cid: "messaging:general", userID: "bob", readAt: nil)),
        ("notification.mark_read", "messaging:general",
         #"{"cid":"messaging:general","user_id":"bob","read_at":"2026-11-22T03:10:04.000Z"}"#,
         .notificationMarkRead(cid: "messaging:general", userID: "bob", readAt: "2026-11-22T03:10:04.000Z")),
        ("notification.mark_unread", "messaging:general",
         #"{"cid":"messaging:general","user_id":"bob","message_id":"m1"}"#,
         .notificationMarkUnread(cid: "messaging:general", userID: "bob", messageID: "m1")),
        ("notification.mark_all_read", "@bob", #"{"user_id":"bob"}"#,
         .notificationMarkAllRead(userID: "bob", readAt: nil)),
        ("notification.mark_all_read", "@bob", #"{"user_id":"bob","read_at":"2026-11-22T03:10:05.000Z"}"#,
         .notificationMarkAllRead(userID: "bob", readAt: "2026-11-22T03:10:05.000Z")),
        ("user.updated", "@bob", #"{"user":{"id":"bob"}}"#,
         .userUpdated(userID: "bob", deliveryReceipts: nil, readReceipts: nil)),
        ("user.updated", "@bob",
         #"{"user":{"id":"bob","privacy_settings":{"read_receipts":{"enabled":false}}}}"#,
         .userUpdated(userID: "bob", deliveryReceipts: nil, readReceipts: false)),
        ("user.updated", "@bob",
         #"{"user":{"id":"bob","privacy_settings":{"delivery_receipts":{"enabled":true},"read_receipts":{"enabled":false}}}}"#,
         .userUpdated(userID: "bob", deliveryReceipts: true, readReceipts: false)),
        ("channel_type.updated", "messaging", #"{"name":"messaging"}"#,
         .channelTypeUpdated(name: "messaging", deliveryEvents: nil, readEvents: nil)),
        ("channel_type.updated", "livestream", #"{"name":"livestream","delivery_events":false,"read_events":true}"#,
         .channelTypeUpdated(name: "livestream", deliveryEvents: false, readEvents: true)),
    ] as [(String, String, String, IngressPayload)])
    func decodesEveryIngressType(type: String, subject: String, data: String, expected: IngressPayload) throws {
        let validated = try validate(event(type: type, subject: subject, data: data))
        #expect(validated.payload == expected)
        #expect(validated.payload?.type.wireName == type)
    }

    // MARK: Stage `in`: each broken data field names its path

    @Test(arguments: [
        // member.updated
        ("member.updated", #"{"cid":"messaging:general","user_id":"bob","muted":"yes"}"#, "data.muted: must be a boolean"),
        ("member.updated", #"{"cid":"messaging:general","user_id":"bob","count_unread":"some"}"#,
         #"data.count_unread: must be "all", "mentions" or "off""#),
        // mentioned_users
        ("message.new", #"{"cid":"messaging:general","message":{"id":"m1","user_id":"a","created_at":"2026-11-22T03:10:00.123Z","mentioned_users":["bob","@cat"]}}"#,
         "data.message.mentioned_users[1]: must not start with @"),
        ("message.new", #"{"cid":"messaging:general","message":{"id":"m1","user_id":"a","created_at":"2026-11-22T03:10:00.123Z","mentioned_users":"bob"}}"#,
         "data.message.mentioned_users: must be an array"),
        // cid
        ("message.read", #"{"user_id":"bob","message_id":"m42"}"#, "data.cid: required"),
        ("message.read", #"{"cid":7,"user_id":"bob","message_id":"m42"}"#, "data.cid: must be a string"),
        ("message.read", #"{"cid":"general","user_id":"bob","message_id":"m42"}"#,
         "data.cid: must be TYPE:ID, TYPE [a-z0-9_-]{1,64}, ID [A-Za-z0-9_!.@-]{1,128}"),
        // user_id
        ("message.read", #"{"cid":"messaging:general","message_id":"m42"}"#, "data.user_id: required"),
        ("message.read", #"{"cid":"messaging:general","user_id":"b b","message_id":"m42"}"#,
         "data.user_id: must match [A-Za-z0-9_!.@-]{1,128}"),
        ("message.read", #"{"cid":"messaging:general","user_id":"@bob","message_id":"m42"}"#,
         "data.user_id: must not start with @"),
        ("member.added", #"{"cid":"messaging:general","user_id":""}"#,
         "data.user_id: must match [A-Za-z0-9_!.@-]{1,128}"),
        ("member.removed", #"{"cid":"messaging:general"}"#, "data.user_id: required"),
        // message_id
        ("message.read", #"{"cid":"messaging:general","user_id":"bob"}"#, "data.message_id: required"),
        ("message.deleted", #"{"cid":"messaging:general","message_id":"m/42"}"#,
         "data.message_id: must match [A-Za-z0-9_!.@-]{1,128}"),
        ("notification.mark_unread", #"{"cid":"messaging:general","user_id":"bob","message_id":null}"#,
         "data.message_id: must be a string"),
        // times
        ("message.read", #"{"cid":"messaging:general","user_id":"bob","message_id":"m42","read_at":"2026-11-22"}"#,
         "data.read_at: must be an RFC 3339 UTC time with three fraction digits, like 2026-11-22T03:10:00.123Z"),
        ("message.delivered",
         #"{"cid":"messaging:general","user_id":"bob","message_id":"m42","delivered_at":1700000000}"#,
         "data.delivered_at: must be a string"),
        ("notification.mark_read", #"{"cid":"messaging:general","user_id":"bob","read_at":"2026-11-22T03:10:00.123"}"#,
         "data.read_at: must be an RFC 3339 UTC time with three fraction digits, like 2026-11-22T03:10:00.123Z"),
        // members
        ("channel.created", #"{"cid":"messaging:general"}"#, "data.members: required"),
        ("channel.created", #"{"cid":"messaging:general","members":"bob"}"#, "data.members: must be an array"),
        ("channel.created", #"{"cid":"messaging:general","members":["a","b","c",4]}"#,
         "data.members[3]: must be a string"),
        ("channel.created", #"{"cid":"messaging:general","members":["a","b","c","d e"]}"#,
         "data.members[3]: must match [A-Za-z0-9_!.@-]{1,128}"),
        ("channel.created", #"{"cid":"messaging:general","members":["@a"]}"#,
         "data.members[0]: must not start with @"),
        // message
        ("message.new", #"{"cid":"messaging:general"}"#, "data.message: required"),
        ("message.new", #"{"cid":"messaging:general","message":"m1"}"#, "data.message: must be an object"),
        ("message.new", #"{"cid":"messaging:general","message":{"user_id":"a","created_at":"2026-11-22T03:10:00.123Z"}}"#,
         "data.message.id: required"),
        ("message.new",
         #"{"cid":"messaging:general","message":{"id":"m 1","user_id":"a","created_at":"2026-11-22T03:10:00.123Z"}}"#,
         "data.message.id: must match [A-Za-z0-9_!.@-]{1,128}"),
        ("message.new",
         #"{"cid":"messaging:general","message":{"id":"m1","user_id":"@a","created_at":"2026-11-22T03:10:00.123Z"}}"#,
         "data.message.user_id: must not start with @"),
        ("message.new", #"{"cid":"messaging:general","message":{"id":"m1","user_id":"a"}}"#,
         "data.message.created_at: required"),
        ("message.new",
         #"{"cid":"messaging:general","message":{"id":"m1","user_id":"a","created_at":"2026-11-22T03:10:00.123Z","type":"deleted"}}"#,
         "data.message.type: must be \"regular\" or \"system\""),
        ("message.new",
         #"{"cid":"messaging:general","message":{"id":"m1","user_id":"a","created_at":"2026-11-22T03:10:00.123Z","silent":"yes"}}"#,
         "data.message.silent: must be a boolean"),
        // user
        ("user.updated", #"{"id":"bob"}"#, "data.user: required"),
        ("user.updated", #"{"user":{"id":"@bob"}}"#, "data.user.id: must not start with @"),
        ("user.updated", #"{"user":{"id":"bob","privacy_settings":true}}"#,
         "data.user.privacy_settings: must be an object"),
        ("user.updated", #"{"user":{"id":"bob","privacy_settings":{"read_receipts":false}}}"#,
         "data.user.privacy_settings.read_receipts: must be an object"),
        ("user.updated", #"{"user":{"id":"bob","privacy_settings":{"delivery_receipts":{}}}}"#,
         "data.user.privacy_settings.delivery_receipts.enabled: required"),
        ("user.updated", #"{"user":{"id":"bob","privacy_settings":{"read_receipts":{"enabled":"no"}}}}"#,
         "data.user.privacy_settings.read_receipts.enabled: must be a boolean"),
        // channel type
        ("channel_type.updated", #"{"read_events":false}"#, "data.name: required"),
        ("channel_type.updated", #"{"name":"Messaging"}"#, "data.name: must match [a-z0-9_-]{1,64}"),
        ("channel_type.updated", #"{"name":"messaging","read_events":"false"}"#,
         "data.read_events: must be a boolean"),
        ("channel_type.updated", #"{"name":"messaging","delivery_events":0}"#,
         "data.delivery_events: must be a boolean"),
    ] as [(String, String, String)])
    func refusesABrokenDataFieldNamingItsPath(type: String, data: String, message: String) {
        let subject: String
        switch type {
        case "user.updated": subject = "@bob"
        case "channel_type.updated": subject = "messaging"
        default: subject = "messaging:general"
        }
        let error = failure(event(type: type, subject: subject, data: data))
        #expect(error?.code == .badEvent)
        #expect(error?.message == message)
    }

    // MARK: Stage `in`: subject rules

    @Test(arguments: [
        "message.read", "message.new", "channel.created", "member.added", "member.removed", "message.deleted",
        "message.delivered", "notification.mark_read", "notification.mark_unread",
    ])
    func refusesAChannelEventWhoseSubjectDiffersFromDataCid(type: String) {
        let data = #"{"cid":"messaging:general","user_id":"bob","message_id":"m1","members":[],"message":{"id":"m1","user_id":"a","created_at":"2026-11-22T03:10:00.123Z"}}"#
        #expect(throws: Never.self) { try validate(event(type: type, subject: "messaging:general", data: data)) }
        let error = failure(event(type: type, subject: "messaging:random", data: data))
        #expect(error?.code == .badEvent)
        #expect(error?.message == "subject: \"messaging:random\" differs from data.cid \"messaging:general\"")
    }

    @Test(arguments: ["bob", "@alice", "@bob2", "@"])
    func refusesAUserUpdatedWhoseSubjectIsNotAtUserID(subject: String) {
        let error = failure(event(type: "user.updated", subject: subject, data: #"{"user":{"id":"bob"}}"#))
        #expect(error?.code == .badEvent)
        #expect(error?.message == "subject: \"\(subject)\" must be \"@bob\" (\"@\" and data.user.id)")
    }

    @Test func refusesAChannelTypeUpdatedWhoseSubjectIsNotItsName() {
        let error = failure(event(type: "channel_type.updated", subject: "livestream", data: #"{"name":"messaging"}"#))
        #expect(error?.code == .badEvent)
        #expect(error?.message == "subject: \"livestream\" differs from data.name \"messaging\"")
    }

    @Test func convertsToABusErrorWithTheSameCodeAndMessage() {
        let error = EventValidationError(code: .badEvent, message: "data.cid: required")
        #expect(error.busError == BusError(.badEvent, "data.cid: required"))
        #expect(error.description == "bad_event: data.cid: required")
    }
}

extension String {
    /// The string with the first occurrence of `target` replaced (no Foundation).
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        var copy = self
        copy.replaceSubrange(range, with: replacement)
        return copy
    }
}

/// The life ingress types (docs/protocol.md's table, docs/events.md rules 20–23): their
/// payloads, their subjects, and a bad field named.
@Suite struct LifeEventValidationTests {
    @Test(arguments: [
        ("channel.truncated", "messaging:general", #"{"cid":"messaging:general","message_id":"m3"}"#,
         IngressPayload.channelTruncated(cid: "messaging:general", messageID: "m3")),
        ("channel.truncated", "messaging:general", #"{"cid":"messaging:general"}"#,
         .channelTruncated(cid: "messaging:general", messageID: nil)),
        ("channel.hidden", "messaging:general", #"{"cid":"messaging:general","user_id":"bob"}"#,
         .channelHidden(cid: "messaging:general", userID: "bob", clearHistory: false)),
        ("channel.visible", "messaging:general", #"{"cid":"messaging:general","user_id":"bob"}"#,
         .channelVisible(cid: "messaging:general", userID: "bob")),
        ("channel.deleted", "messaging:general", #"{"cid":"messaging:general"}"#, .channelDeleted(cid: "messaging:general")),
        ("user.deleted", "@bob", #"{"user_id":"bob","hard_delete":true}"#, .userDeleted(userID: "bob", hard: true)),
        ("user.banned", "messaging:general", #"{"user_id":"bob","cid":"messaging:general"}"#,
         .userBanned(userID: "bob", cid: "messaging:general")),
        ("user.unbanned", "@bob", #"{"user_id":"bob"}"#, .userUnbanned(userID: "bob", cid: nil)),
    ])
    func acceptsEachLifeType(type: String, subject: String, data: String, payload: IngressPayload) throws {
        #expect(try validate(event(type: type, subject: subject, data: data)).payload == payload)
    }

    @Test(arguments: [
        ("user.deleted", "messaging:general", #"{"user_id":"bob"}"#, #"subject: "messaging:general" must be "@bob""#),
        ("user.banned", "@bob", #"{"user_id":"bob","cid":"messaging:general"}"#, #"subject: "@bob" differs from data.cid"#),
        ("user.deleted", "@bob", #"{"user_id":"bob","hard_delete":"yes"}"#, "data.hard_delete: must be a boolean"),
        ("channel.hidden", "messaging:general", #"{"cid":"messaging:general","user_id":"bob","clear_history":1}"#,
         "data.clear_history: must be a boolean"),
        ("channel.truncated", "messaging:general", #"{"cid":"messaging:general","message_id":""}"#, "data.message_id:"),
        ("channel.deleted", "messaging:general", #"{}"#, "data.cid: required"),
    ])
    func refusesABadLifeEventNamingTheField(type: String, subject: String, data: String, message: String) {
        let error = failure(event(type: type, subject: subject, data: data))
        #expect(error?.code == .badEvent)
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
    }
}
