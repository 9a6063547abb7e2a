import Testing
@testable import EventBus
@testable import EventBusCore

// MARK: - Helpers

/// An ingress event's JSON text from its envelope's `type`, `subject` and a `data` text.
private func ingressEvent(_ type: String, subject: String = "messaging:general", data: String) -> [UInt8] {
    Array(
        (#"{"specversion":"1.0","id":"b7d2c1","source":"/chat-api","type":"\#(type)","subject":"\#(subject)","#
            + #""time":"2026-11-22T03:10:00.123Z","data":\#(data)}"#).utf8)
}

/// The answer of the full path, `validate(_:stage:)` at stage `in`, as ``EnvelopeFields`` with the data range the
/// envelope scan finds.
private func fullPath(_ bytes: [UInt8]) -> Result<EnvelopeFields, EventValidationError> {
    Result { () throws(EventValidationError) in
        var fields = EnvelopeFields(try EventValidator.validate(bytes, stage: Stage.in).envelope)
        fields.dataRange = (try? EventValidator.scanEnvelope(bytes))?.dataRange
        return fields
    }
}

private func checked(_ bytes: [UInt8]) -> Result<EnvelopeFields, EventValidationError> {
    Result { () throws(EventValidationError) in try EventValidator.checkIngress(bytes) }
}

/// Records an issue unless `checkIngress` answers exactly as the full path does; returns whether the fast path
/// alone answered.
@discardableResult
private func expectSameAnswer(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
    let expected = fullPath(bytes)
    let text = String(decoding: bytes, as: UTF8.self)
    #expect(checked(bytes) == expected, "\(text)", sourceLocation: sourceLocation)
    let fast = EventValidator.fastIngress(bytes)
    if let fast {
        // The fast path vouches only for events the full path accepts, with the same fields.
        #expect(Result.success(fast) == expected, "\(text)", sourceLocation: sourceLocation)
    }
    if case .success(let fields) = expected, let range = fields.dataRange {
        // The range holds `data` as the full path parsed it.
        let data = try? EventValidator.validate(bytes, stage: Stage.in).envelope.data
        #expect((try? JSONParser.parse(Array(bytes[range]))) == data, "\(text)", sourceLocation: sourceLocation)
    }
    return fast != nil
}

/// Random ingress events of every type: mostly valid, else with one member (now and then more) wrong in every
/// way the rules can refuse, and with escapes in valid values, which leave them to the full path.
struct IngressEventGenerator {
    var random: SplitMix64
    /// The member the event being built gets wrong, if any.
    var fault: String?

    init(random: SplitMix64) {
        self.random = random
    }

    mutating func pick<T>(_ choices: [T]) -> T { choices[Int(random.next() % UInt64(choices.count))] }
    mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }

    static let handledTypes = [
        "message.read", "message.delivered", "notification.mark_read", "notification.mark_unread", "member.added",
        "member.removed", "message.deleted", "message.new",
    ]
    static let otherIngressTypes = ["channel.created", "user.updated", "channel_type.updated"]
    static let notIngressTypes = ["query", "receipt.rejected", "typing.start"]

    /// The members of `data` (and `data.message`) each type reads.
    static let dataFields: [String: [String]] = [
        "message.read": ["cid", "user_id", "message_id", "read_at"],
        "message.delivered": ["cid", "user_id", "message_id", "delivered_at"],
        "notification.mark_read": ["cid", "user_id", "read_at"],
        "notification.mark_unread": ["cid", "user_id", "message_id"],
        "member.added": ["cid", "user_id"], "member.removed": ["cid", "user_id"],
        "message.deleted": ["cid", "message_id"],
        "message.new": ["cid", "message", "id", "user_id", "created_at", "type", "silent", "mentioned_users"],
        "channel.created": ["cid", "members"], "user.updated": ["user"],
        "channel_type.updated": ["name", "read_events"],
    ]

    static let goodUserLists = [
        "[]", "[ ]", #"["bob"]"#, #"[ "bob" ,"A.b_c-d!e@f" ]"#, #"["b\u006fb","cat"]"#, #"["bob","bob"]"#,
    ]
    static let badUserLists = [
        #"["@bob"]"#, "[1]", #"["bo b"]"#, #"[""]"#, #"["bob",null]"#, #"[["bob"]]"#, #"["\u0040bob"]"#, #"{"bob":1}"#,
    ]

    static let wrongKinds = ["1", "-0.5", "null", "true", "{}", "[]", #"{"a":"b"}"#, #"["x"]"#]

    static let goodIDs = [
        #""bob""#, #""u14""#, #""m42""#, #""A.b_c-d!e@f""#, "\"\(String(repeating: "i", count: 128))\"", #""b\u006fb""#,
    ]
    static let badIDs = [
        #""""#, "\"\(String(repeating: "i", count: 129))\"", #""bo b""#, #""é""#, #""a/b""#, #""a:b""#, #""\u0000""#,
        #""b\nb""#,
    ]
    static let atIDs = [#""@bob""#, #""\u0040bob""#, #""@""#]
    static let goodTimes = [
        #""2026-11-22T03:10:00.123Z""#, #""2024-02-29T23:59:59.999Z""#, #""2000-01-31T00:00:00.000Z""#,
        #""2026-11-22T03:10:00.123\u005a""#,
    ]
    static let badTimes = [
        #""2026-11-22T03:10:00Z""#, #""2025-02-29T00:00:00.000Z""#, #""2026-13-01T00:00:00.000Z""#,
        #""2026-11-22T24:00:00.000Z""#, #""2026-11-22 03:10:00.123Z""#, #""2026-11-22T03:10:00.123+01:00""#, #""""#,
    ]
    static let goodCIDs = [
        "messaging:general", "team-1:a.b@c!_-", "a_b:K", String(repeating: "t", count: 64) + ":"
            + String(repeating: "c", count: 128), #"messaging:gener\u0061l"#,
    ]
    static let badCIDs = [
        "messaging", ":general", "Messaging:general", "messaging:", "messaging:gen eral", "a:b:c", "a/b:c",
        String(repeating: "t", count: 65) + ":x", "x:" + String(repeating: "c", count: 129), "messaging:é", "",
    ]

    /// `"name":value`: a `good` value (for an optional member, absent half of the time) unless `name` is the
    /// fault or, rarely, by chance; then absent, of the wrong kind or `bad`.
    mutating func member(_ name: String, good: [String], bad: [String], optional: Bool = false) -> String? {
        guard name == fault || chance(2) else {
            return optional && chance(50) ? nil : "\"\(name)\":\(pick(good))"
        }
        let roll = random.next() % 100
        if roll < 20 && !optional { return nil }
        if roll < 55 { return "\"\(name)\":\(pick(Self.wrongKinds))" }
        return "\"\(name)\":\(pick(bad))"
    }

    mutating func userID(_ name: String = "user_id") -> String? {
        member(name, good: Self.goodIDs, bad: Self.badIDs + Self.atIDs)
    }

    mutating func messageID(_ name: String = "message_id") -> String? {
        member(name, good: Self.goodIDs + Self.atIDs, bad: Self.badIDs)
    }

    mutating func time(_ name: String) -> String? {
        member(name, good: Self.goodTimes, bad: Self.badTimes, optional: true)
    }

    mutating func message() -> String? {
        let fields = [
            messageID("id"), userID(), member("created_at", good: Self.goodTimes, bad: Self.badTimes),
            member("type", good: [#""regular""#, #""system""#, #""\u0073ystem""#],
                   bad: [#""System""#, #""regular ""#, #""""#], optional: true),
            member("silent", good: ["true", "false"], bad: [#""true""#, "0"], optional: true),
            member("mentioned_users", good: Self.goodUserLists, bad: Self.badUserLists, optional: true),
            chance(20) ? #""text":"h\u00e9llo \ud83d\ude00""# : nil,
        ]
        return member("message", good: [object(fields)], bad: [#""m1""#, "[]"])
    }

    /// The `data` members of an event of `type`, besides `cid`.
    mutating func dataMembers(_ type: String) -> [String?] {
        switch type {
        case "message.read": [userID(), messageID(), time("read_at")]
        case "message.delivered": [userID(), messageID(), time("delivered_at")]
        case "notification.mark_read": [userID(), time("read_at")]
        case "notification.mark_unread": [userID(), messageID()]
        case "member.added", "member.removed": [userID()]
        case "message.deleted": [messageID()]
        case "message.new": [message()]
        case "channel.created":
            [member("members", good: ["[]", #"["alice","bob"]"#, #"["b\u006fb"]"#], bad: [#"["@bob"]"#, "[1]"])]
        case "user.updated":
            [member("user", good: [#"{"id":"bob"}"#, #"{"id":"bob","privacy_settings":{"read_receipts":{"enabled":false}}}"#],
                    bad: [#"{"id":"@bob"}"#, #"{"id":"bob","privacy_settings":[]}"#])]
        case "channel_type.updated":
            [member("name", good: [#""messaging""#], bad: [#""Messaging""#]),
             member("read_events", good: ["true"], bad: [#""yes""#], optional: true)]
        default: [userID()]
        }
    }

    /// A JSON object of the members given, shuffled; now and then with an unknown member, or one repeated.
    mutating func object(_ members: [String?]) -> String {
        var present = members.compactMap { $0 }
        if chance(15) { present.append(pick([#""extra":{"cid":1}"#, #""note":"x""#, #""n":null"#])) }
        if !present.isEmpty && chance(2) { present.append(pick(present)) }
        present.shuffle(using: &random)
        return "{" + present.joined(separator: chance(20) ? " , " : ",") + "}"
    }

    /// The subject of an event of `type` whose cid is `cid`: the cid, the same once decoded, or (the fault) another.
    mutating func subject(cid: String, type: String) -> String {
        guard fault != "subject" else {
            return pick(["messaging:other", "@bob", "messaging:general ", "livestream:general", "a/b", ""])
        }
        switch type {
        case "user.updated": return "@bob"
        case "channel_type.updated": return "messaging"
        default: break
        }
        let roll = random.next() % 100
        if roll < 5 { return cid.replacingFirst("m", with: #"\u006d"#) }
        if roll < 10 { return cid.replacingFirst("K", with: #"\u212A"#) }
        return cid
    }

    mutating func event() -> String {
        let roll = random.next() % 100
        let type =
            roll < 85 ? pick(Self.handledTypes) : roll < 97 ? pick(Self.otherIngressTypes) : pick(Self.notIngressTypes)
        fault = chance(45) ? nil : pick((Self.dataFields[type] ?? ["cid"]) + ["time", "data", "subject"])
        let cid = fault == "cid" && chance(70) ? pick(Self.badCIDs) : pick(Self.goodCIDs)
        let usesCID = type != "user.updated" && type != "channel_type.updated"
        let cidMember: String? = usesCID ? member("cid", good: ["\"\(cid)\""], bad: ["\"\(cid)\""]) : nil
        let data = object([cidMember] + dataMembers(type))
        let envelope: [String?] = [
            #""specversion":"1.0""#, #""id":"b7d2c1""#, #""source":"/chat-api""#, "\"type\":\"\(type)\"",
            "\"subject\":\"\(subject(cid: cid, type: type))\"",
            member("time", good: Self.goodTimes, bad: Self.badTimes, optional: true),
            member("data", good: [data], bad: [#""x""#]),
        ]
        return object(envelope)
    }
}

private extension String {
    func replacingFirst(_ target: Character, with replacement: String) -> String {
        guard let index = firstIndex(of: target) else { return self }
        return String(self[..<index]) + replacement + String(self[self.index(after: index)...])
    }
}

// MARK: - Tests

@Suite struct IngressScanTests {
    static let messageRead = ingressEvent(
        "message.read",
        data: #"{"cid":"messaging:general","user_id":"bob","message_id":"m42","read_at":"2026-11-22T03:10:00.123Z"}"#)

    @Test func checksAValidMessageReadOnTheFastPath() throws {
        let fields = try EventValidator.checkIngress(Self.messageRead)
        #expect(fields.id == "b7d2c1")
        #expect(fields.type == "message.read")
        #expect(fields.subject == "messaging:general")
        #expect(fields.time == "2026-11-22T03:10:00.123Z")
        #expect(fields.hasData)
        let range = try #require(fields.dataRange)
        #expect(String(decoding: Self.messageRead[range], as: UTF8.self).hasPrefix(#"{"cid":"messaging:general","#))
        #expect(EventValidator.fastIngress(Self.messageRead) == fields)
        #expect(expectSameAnswer(Self.messageRead))
    }

    @Test func checksFromARawBuffer() throws {
        let fields = try Self.messageRead.withUnsafeBytes { buffer throws(EventValidationError) in
            try EventValidator.checkIngress(buffer)
        }
        #expect(Result.success(fields) == fullPath(Self.messageRead))
    }

    @Test(arguments: [
        ("message.read", #"{"cid":"messaging:general","user_id":"bob","message_id":"m42"}"#),
        ("message.delivered", #"{"cid":"messaging:general","user_id":"bob","message_id":"@m42","delivered_at":"2026-11-22T03:10:00.123Z"}"#),
        ("notification.mark_read", #"{"cid":"messaging:general","user_id":"bob","read_at":"2024-02-29T00:00:00.000Z"}"#),
        ("notification.mark_unread", #"{"cid":"messaging:general","user_id":"bob","message_id":"m42"}"#),
        ("member.added", #"{"cid":"messaging:general","user_id":"bob"}"#),
        ("member.removed", #"{"user_id":"bob","cid":"messaging:general","extra":[1,{"user_id":null}]}"#),
        ("message.deleted", #"{"cid":"messaging:general","message_id":"m42"}"#),
        ("message.new", #"{"cid":"messaging:general","message":{"id":"m1","user_id":"bob","created_at":"2026-11-22T03:10:00.123Z"}}"#),
        ("message.new", #"{"cid":"messaging:general","message":{"id":"m2","user_id":"sys","created_at":"2026-11-22T03:10:01.000Z","type":"system","silent":true,"text":"h\u00e9\ud83d\ude00"}}"#),
    ])
    func theFastPathTakesTheCommonTypes(type: String, data: String) {
        let bytes = ingressEvent(type, data: data)
        #expect(EventValidator.fastIngress(bytes) != nil)
        #expect(expectSameAnswer(bytes))
    }

    @Test(arguments: [
        #"[]"#, #"[ ]"#, #"["bob"]"#, #"[ "bob" , "cat","A.b_c-d!e@f" ]"#, #"["bob","bob"]"#,
    ])
    func theFastPathTakesPlainMentionLists(list: String) {
        let data = #"{"cid":"messaging:general","message":{"id":"m1","user_id":"ann","created_at":"2026-11-22T03:10:00.123Z","mentioned_users":"#
            + list + "}}"
        let bytes = ingressEvent("message.new", data: data)
        #expect(EventValidator.fastIngress(bytes) != nil)
        #expect(expectSameAnswer(bytes))
    }

    @Test(arguments: [
        // Refused by both paths, with the full path's words.
        (#"["@bob"]"#, false), (#"["bob",1]"#, false), (#"["bo b"]"#, false), (#""bob""#, false), (#"[""]"#, false),
        (#"[["bob"]]"#, false),
        // Valid, but an escape leaves it to the full path.
        (#"["b\u006fb"]"#, true),
    ])
    func otherMentionListsGetTheFullPathsAnswer(list: String, valid: Bool) {
        let data = #"{"cid":"messaging:general","message":{"id":"m1","user_id":"ann","created_at":"2026-11-22T03:10:00.123Z","mentioned_users":"#
            + list + "}}"
        let bytes = ingressEvent("message.new", data: data)
        #expect(EventValidator.fastIngress(bytes) == nil)
        #expect(!expectSameAnswer(bytes))
        #expect(((try? EventValidator.validate(bytes, stage: Stage.in)) != nil) == valid)
    }

    @Test(arguments: [
        ("messaging:general", #"{"cid":"messaging:general","members":["alice","bob"]}"#),
        ("@bob", #"{"user":{"id":"bob","privacy_settings":{"read_receipts":{"enabled":false}}}}"#),
        ("livestream", #"{"name":"livestream","delivery_events":false}"#),
    ])
    func theOtherIngressTypesFallBackToTheSameAnswer(subject: String, data: String) throws {
        let type = subject.hasPrefix("@") ? "user.updated" : subject == "livestream" ? "channel_type.updated" : "channel.created"
        let bytes = ingressEvent(type, subject: subject, data: data)
        #expect(EventValidator.fastIngress(bytes) == nil)
        #expect(!expectSameAnswer(bytes))
        #expect(try EventValidator.checkIngress(bytes).type == type)
    }

    @Test(arguments: [
        "messaging:general", "a:b", "team-1:a.b@c!_-", ":x", "x:", "Messaging:x", "a:b:c", "a b:c", "", "@bob", "bob",
        "@", "b@b", String(repeating: "i", count: 128), String(repeating: "i", count: 129), "é",
        "2026-11-22T03:10:00.123Z", "2024-02-29T23:59:59.999Z", "2025-02-29T00:00:00.000Z", "2026-11-22T03:10:00Z",
        "2026-11-22T03:10:60.000Z", "2026-11-22T03:10:00.123z",
    ])
    func theByteRulesAreTheStringRules(text: String) {
        var copy = text
        copy.withUTF8 { bytes in
            #expect(Identifier.isCID(bytes) == Identifier.isValidCID(text))
            #expect(Identifier.isUserID(bytes) == Identifier.isValidUserID(text))
            #expect(Identifier.isID(bytes) == Identifier.isValidMessageID(text))
            #expect(Identifier.isTimestamp(bytes) == Identifier.isValidTimestamp(text))
        }
    }

    @Test func refusesASubjectThatDiffersFromTheCidWithTheFullPathsMessage() {
        let bytes = ingressEvent(
            "message.read", subject: "messaging:other",
            data: #"{"cid":"messaging:general","user_id":"bob","message_id":"m42"}"#)
        #expect(EventValidator.fastIngress(bytes) == nil)
        #expect(
            throws: EventValidationError(
                code: .badEvent, message: #"subject: "messaging:other" differs from data.cid "messaging:general""#)
        ) {
            try EventValidator.checkIngress(bytes)
        }
        expectSameAnswer(bytes)
    }

    @Test(arguments: [
        #"{"cid":"messaging:general","user_id":"b\u006fb","message_id":"m42"}"#,
        #"{"cid":"messaging:gener\u0061l","user_id":"bob","message_id":"m42"}"#,
        #"{"cid":"messaging:general","user_id":"bob","message_id":"m42","read_at":"2026-11-22T03:10:00.123\u005a"}"#,
        #"{"cid":"messaging:general","user_id":"\u0040bob","message_id":"m42"}"#,
    ])
    func anEscapedFieldFallsBackAndGivesTheSameAnswer(data: String) {
        let bytes = ingressEvent("message.read", data: data)
        #expect(EventValidator.fastIngress(bytes) == nil)
        #expect(!expectSameAnswer(bytes))
    }

    @Test func aSubjectEqualToTheCidOnlyAsAStringFallsBackAndGivesTheSameAnswer() throws {
        // U+212A KELVIN SIGN is canonically equivalent to "K": equal `String`s, different bytes.
        let bytes = ingressEvent(
            "member.added", subject: #"messaging:\u212A"#, data: #"{"cid":"messaging:K","user_id":"bob"}"#)
        #expect(EventValidator.fastIngress(bytes) == nil)
        #expect(!expectSameAnswer(bytes))
    }

    @Test(arguments: [
        ("message.read", #"{"cid":"messaging:general","user_id":null,"message_id":"m42"}"#),
        ("message.read", #"{"cid":"messaging:general","user_id":"bob","message_id":42}"#),
        ("message.read", #"{"cid":"messaging:general","user_id":"bob"}"#),
        ("message.read", #"{"cid":"messaging:general","user_id":"bob","message_id":"m42","read_at":null}"#),
        ("message.read", #"{"cid":"messaging:general","user_id":"@bob","message_id":"m42"}"#),
        ("message.delivered", #"{"cid":"messaging:general","user_id":"bob","message_id":"m42","delivered_at":"2025-02-29T00:00:00.000Z"}"#),
        ("notification.mark_read", #"{"cid":"messaging","user_id":"bob"}"#),
        ("member.added", #"{"user_id":"bob"}"#),
        ("message.deleted", #"{"cid":"messaging:general","message_id":""}"#),
        ("message.new", #"{"cid":"messaging:general","message":"m1"}"#),
        ("message.new", #"{"cid":"messaging:general","message":{"id":"m1","user_id":"bob"}}"#),
        ("message.new", #"{"cid":"messaging:general","message":{"id":"m1","user_id":"bob","created_at":"2026-11-22T03:10:00.123Z","type":"System"}}"#),
        ("message.new", #"{"cid":"messaging:general","message":{"id":"m1","user_id":"bob","created_at":"2026-11-22T03:10:00.123Z","silent":"true"}}"#),
        ("message.new", #"{"cid":"messaging:general","message":{"id":"m1","user_id":"bob","created_at":"2026-11-22T03:10:00.123Z","silent":null}}"#),
        ("message.new", #"{"cid":"messaging:general","message":{"id":"m1","user_id":"bob","created_at":"2026-11-22T03:10:00.123Z","type":null}}"#),
        ("message.read", #"{"cid":"messaging:general","user_id":"bob","user_id":"bob","message_id":"m42"}"#),
        ("message.updated", #"{"cid":"messaging:general","user_id":"bob","message_id":"m42"}"#),
    ])
    func refusesWhatTheFullPathRefusesWithItsError(type: String, data: String) {
        let bytes = ingressEvent(type, data: data)
        #expect(EventValidator.fastIngress(bytes) == nil)
        guard case .failure = checked(bytes) else {
            Issue.record("accepted \(String(decoding: bytes, as: UTF8.self))")
            return
        }
        expectSameAnswer(bytes)
    }

    @Test func refusesABadEnvelopeTimeAndAMissingDataAsTheFullPathDoes() {
        let data = #"{"cid":"messaging:general","user_id":"bob","message_id":"m42"}"#
        let badTime = Array(
            String(decoding: ingressEvent("message.read", data: data), as: UTF8.self)
                .replacingFirst("Z", with: "+00:00").utf8)
        let noData = Array(
            #"{"specversion":"1.0","id":"b7d2c1","source":"/chat-api","type":"message.read","subject":"messaging:general"}"#
                .utf8)
        for bytes in [badTime, noData] {
            #expect(EventValidator.fastIngress(bytes) == nil)
            expectSameAnswer(bytes)
        }
    }

    @Test(arguments: [21 as UInt64, 22, 23, 24])
    func agreesWithTheFullPathOnGeneratedEvents(seed: UInt64) {
        var generator = IngressEventGenerator(random: SplitMix64(seed: seed))
        var mutator = DocumentGenerator(random: SplitMix64(seed: seed &* 37))
        var outcomes: [String: Int] = [:]
        var fast = 0, handledValid = 0
        for _ in 0..<3_000 {
            let bytes = Array(generator.event().utf8)
            for event in [bytes, mutator.mutate(bytes)] {
                let tookFastPath = expectSameAnswer(event)
                if tookFastPath { fast += 1 }
                switch fullPath(event) {
                case .success(let fields):
                    outcomes["ok", default: 0] += 1
                    guard IngressEventGenerator.handledTypes.contains(fields.type) else { break }
                    handledValid += 1
                    // With no escape anywhere, nothing is left for the full path to decide.
                    #expect(tookFastPath || event.contains(0x5C), "\(String(decoding: event, as: UTF8.self))")
                case .failure(let error):
                    let field = error.message.split(separator: ":").first ?? ""
                    outcomes[error.code.wire + " " + field, default: 0] += 1
                }
            }
        }
        // Every sort of answer is well exercised: acceptance, bad JSON, an unknown type, a refusal of each field.
        for outcome in [
            "ok", "bad_json event", "unknown_type type", "bad_event time", "bad_event data", "bad_event subject",
            "bad_event data.cid", "bad_event data.user_id", "bad_event data.message_id", "bad_event data.read_at",
            "bad_event data.delivered_at", "bad_event data.message", "bad_event data.message.id",
            "bad_event data.message.user_id", "bad_event data.message.created_at", "bad_event data.message.type",
            "bad_event data.message.silent",
        ] {
            #expect(outcomes[outcome, default: 0] > 5, "\(outcome): \(outcomes)")
        }
        // The fast path answers for most valid events of the types it knows (the rest have an escape).
        #expect(fast * 2 > handledValid, "fast path for \(fast) of \(handledValid) valid events")
    }
}
