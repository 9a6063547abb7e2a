import Testing
@testable import EventBus
@testable import EventBusCore

@Suite struct EventIdentifierTests {
    @Test(arguments: [
        "messaging:general", "a:b", "team_1-x:Room!.@_-9",
        String(repeating: "t", count: 64) + ":" + String(repeating: "I", count: 128),
    ])
    func acceptsValidCIDs(cid: String) {
        #expect(Identifier.isValidCID(cid))
    }

    @Test(arguments: [
        "", "messaging", ":general", "messaging:", "Messaging:general", "messaging:gen eral", "messaging:a:b",
        "mess/aging:x", "messaging:caf\u{E9}",
        String(repeating: "t", count: 65) + ":x",
        "t:" + String(repeating: "I", count: 129),
    ])
    func rejectsInvalidCIDs(cid: String) {
        #expect(!Identifier.isValidCID(cid))
    }

    @Test(arguments: ["bob", "Bob_2", "a.b@c!d-e", "b@", String(repeating: "u", count: 128)])
    func acceptsValidUserIDs(userID: String) {
        #expect(Identifier.isValidUserID(userID))
    }

    @Test(arguments: ["", "@bob", "bo b", "bob/x", "bob:x", "b\u{F6}b", String(repeating: "u", count: 129)])
    func rejectsInvalidUserIDs(userID: String) {
        #expect(!Identifier.isValidUserID(userID))
    }

    @Test func messageIDsMayStartWithAnAtSign() {
        #expect(Identifier.isValidMessageID("@m42"))
        #expect(!Identifier.isValidMessageID(""))
        #expect(!Identifier.isValidMessageID("m 42"))
        #expect(!Identifier.isValidMessageID(String(repeating: "m", count: 129)))
    }

    @Test(arguments: [("messaging", true), ("live_stream-2", true), ("Messaging", false), ("", false),
                      ("a.b", false), (String(repeating: "n", count: 64), true), (String(repeating: "n", count: 65), false)])
    func checksChannelTypeNames(name: String, valid: Bool) {
        #expect(Identifier.isValidChannelTypeName(name) == valid)
    }

    @Test(arguments: [
        "2026-11-22T03:10:00.123Z", "2024-02-29T23:59:59.999Z", "2000-02-29T00:00:00.000Z",
        "2026-12-31T00:00:00.000Z", "2026-04-30T12:00:00.000Z", "0000-01-01T00:00:00.000Z",
    ])
    func acceptsStrictTimestamps(time: String) {
        #expect(Identifier.isValidTimestamp(time))
    }

    @Test(arguments: [
        "", "2026-11-22T03:10:00Z", "2026-11-22T03:10:00.12Z", "2026-11-22T03:10:00.1234Z",
        "2026-11-22T03:10:00.123", "2026-11-22T03:10:00.123+00:00", "2026-11-22t03:10:00.123Z",
        "2026-11-22 03:10:00.123Z", "2026-11-22T03:10:00.123z", "2026-13-01T00:00:00.000Z",
        "2026-00-01T00:00:00.000Z", "2026-11-00T00:00:00.000Z", "2026-11-31T00:00:00.000Z",
        "2026-02-29T00:00:00.000Z", "1900-02-29T00:00:00.000Z", "2026-11-22T24:00:00.000Z",
        "2026-11-22T03:60:00.000Z", "2026-11-22T03:10:60.000Z", "2026-11-22T03:10:00.12aZ",
        "+026-11-22T03:10:00.123Z", "2026-1-22T03:10:00.123ZZ",
    ])
    func rejectsLooseOrImpossibleTimestamps(time: String) {
        #expect(!Identifier.isValidTimestamp(time))
    }

    @Test(arguments: [("message.read", true), ("a", true), ("channel_type.updated", true), ("Message.read", false),
                      ("1type", false), (".x", false), ("message-read", false), ("", false),
                      ("a" + String(repeating: "b", count: 63), true), ("a" + String(repeating: "b", count: 64), false)])
    func checksEventTypeNames(name: String, valid: Bool) {
        #expect(Identifier.isValidEventTypeName(name) == valid)
    }
}

@Suite struct EventTopicAndStageTests {
    @Test func topicIsStageSubjectType() {
        #expect(Topic.make(stage: "out", subject: "messaging:general", type: "message.read")
            == Array("out/messaging:general/message.read".utf8))
        #expect(Topic.make(stage: "out", subject: "@bob", type: "notification.mark_read")
            == Array("out/@bob/notification.mark_read".utf8))
    }

    /// The broker's form: slices of the frame, wherever they lie in it; empty parts too.
    @Test func topicFromBytesIsTheSameTopic() {
        let frame = Array(#"{"subject":"messaging:general","type":"message.read"}"#.utf8)
        let subject = frame[12..<29], type = frame[39..<51]
        #expect(String(decoding: subject, as: UTF8.self) == "messaging:general")
        #expect(String(decoding: type, as: UTF8.self) == "message.read")
        #expect(Topic.make(stage: Array("out".utf8), subject: subject, type: type)
            == Topic.make(stage: "out", subject: "messaging:general", type: "message.read"))
        #expect(Topic.make(stage: [], subject: frame[0..<0], type: frame[(frame.count - 1)...]) == Array("//}".utf8))
    }

    @Test func subjectPrefixEndsWithASlash() {
        #expect(Topic.prefix(stage: "out", subject: "@bob") == Array("out/@bob/".utf8))
    }

    @Test func reservedStagesAreInOutDiag() {
        #expect(Stage.reserved == ["in", "out", "diag"])
        #expect(Stage.isReserved(Stage.in) && Stage.isReserved(Stage.out) && Stage.isReserved(Stage.diag))
        #expect(!Stage.isReserved("receipt-reducer"))
    }

    @Test(arguments: [("receipt-reducer", true), ("read_privacy", true), ("a", true), ("py2", true),
                      (String(repeating: "s", count: 64), true), (String(repeating: "s", count: 65), false),
                      ("", false), ("Read", false), ("a.b", false), ("a/b", false), ("external:x", false),
                      ("in", false), ("out", false), ("diag", false)])
    func pluginStageNames(name: String, valid: Bool) {
        #expect(Stage.isValidName(name) == valid)
    }
}

@Suite struct EventTypeTests {
    @Test func ingressTypesAreThoseOfDocsEvents() {
        let ingress = EventType.allCases.filter(\.isIngress).map(\.wireName)
        #expect(ingress == [
            "channel.created", "member.added", "member.removed", "member.updated", "message.new", "message.deleted",
            "message.delivered", "message.read", "notification.mark_read", "notification.mark_unread",
            "notification.mark_all_read", "user.updated", "channel_type.updated", "channel.truncated", "channel.hidden",
            "channel.visible", "channel.deleted", "user.deleted", "user.banned", "user.unbanned",
        ])
    }

    @Test func privateTypesAreSettingsMembershipAndLife() {
        let privateTypes = Set(EventType.allCases.filter(\.isPrivate))
        #expect(privateTypes == [
            .channelCreated, .memberAdded, .memberRemoved, .memberUpdated, .userUpdated, .channelTypeUpdated,
            .channelTruncated, .channelHidden, .channelVisible, .channelDeleted, .userDeleted, .userBanned, .userUnbanned,
        ])
    }

    @Test(arguments: [EventType.receiptRejected, .receiptSuppressed, .query, .reply])
    func egressAndBusTypesAreNotIngress(type: EventType) {
        #expect(!type.isIngress)
        #expect(!type.isPrivate)
    }

    @Test func wireNamesLookUp() {
        #expect(EventType(wireName: "receipt.suppressed") == .receiptSuppressed)
        #expect(EventType(wireName: "query") == .query)
        #expect(EventType(wireName: "message.unknown") == nil)
        for type in EventType.allCases {
            #expect(Identifier.isValidEventTypeName(type.wireName))
        }
    }
}
