import EventBus
import EventBusPlugin
import PrivacyFilter
import ReceiptReducer
import Testing

/// The privacy rules (docs/privacy.md "Rules"), one test per rule, over the
/// reducer and both filters without sockets.
@Suite struct PrivacyFilterTests {
    static let cid = "messaging:general"

    /// ann, bob and cat in a channel; ann sent m1 and m2.
    static func channel(_ filters: [PrivacyFilter] = [PrivacyFilter(policy: .read), PrivacyFilter(policy: .delivery)]) throws -> FilterDriver {
        var driver = FilterDriver(filters)
        try driver.send(.channelCreated(cid: cid, members: ["ann", "bob", "cat"]))
        try driver.send(.messageNew(cid: cid, message: message("m1", from: "ann")))
        try driver.send(.messageNew(cid: cid, message: message("m2", from: "ann")))
        return driver
    }

    @Test func partialUserUpdateKeepsTheOtherSettingAndEverythingDefaultsToEnabled() {
        var settings = PrivacySettings()
        #expect(settings.flags(ofUser: "bob") == [])
        settings.apply(.userUpdated(userID: "bob", deliveryReceipts: false, readReceipts: nil))
        settings.apply(.userUpdated(userID: "bob", deliveryReceipts: nil, readReceipts: false))
        #expect(settings.flags(ofUser: "bob") == [.readOff, .deliveryOff])
        settings.apply(.userUpdated(userID: "bob", deliveryReceipts: true, readReceipts: nil))
        #expect(settings.flags(ofUser: "bob") == [.readOff])
        settings.apply(.channelTypeUpdated(name: "livestream", deliveryEvents: nil, readEvents: false))
        #expect(settings.flags(ofChannelType: "livestream") == [.readOff])
        #expect(settings.flags(ofChannelType: "messaging") == [])
    }

    @Test func settingsSurviveASnapshotRoundTrip() throws {
        var settings = PrivacySettings()
        settings.apply(.userUpdated(userID: "bob", deliveryReceipts: false, readReceipts: false))
        settings.apply(.channelTypeUpdated(name: "livestream", deliveryEvents: false, readEvents: nil))
        settings.count(.userSetting)
        #expect(try PrivacySettings(snapshot: settings.snapshot()) == settings)
    }

    @Test func markAllReadHidesTheReadsOfAUserWithReadReceiptsOff() throws {
        var driver = try Self.channel()
        try driver.send(.channelCreated(cid: "messaging:other", members: ["ann", "bob"]))
        try driver.send(.messageNew(cid: "messaging:other", message: message("o1", from: "ann")))
        try driver.send(.userUpdated(userID: "bob", deliveryReceipts: nil, readReceipts: false))
        let bob = try driver.send(.notificationMarkAllRead(userID: "bob", readAt: nil))
        // Neither channel sees bob's reads; his own devices get their totals.
        #expect(bob.kinds == ["@bob/notification.mark_all_read"])
        let cat = try driver.send(.notificationMarkAllRead(userID: "cat", readAt: nil))
        #expect(cat.kinds == ["\(Self.cid)/message.read", "@cat/notification.mark_all_read"])
    }

    @Test func readFromAUserWithReadReceiptsOffIsSuppressedAndOthersPass() throws {
        var driver = try Self.channel()
        try driver.send(.userUpdated(userID: "bob", deliveryReceipts: nil, readReceipts: false))
        let bob = try driver.send(.messageRead(cid: Self.cid, userID: "bob", messageID: "m1", readAt: nil))
        // bob's own devices still get the notification; the channel does not see the read.
        #expect(bob.kinds == ["@bob/notification.mark_read"])
        let cat = try driver.send(.messageRead(cid: Self.cid, userID: "cat", messageID: "m1", readAt: nil))
        #expect(cat.kinds == ["\(Self.cid)/message.read", "@cat/notification.mark_read"])
    }

    @Test func deliveryFromAUserWithDeliveryReceiptsOffIsSuppressed() throws {
        var driver = try Self.channel()
        try driver.send(.userUpdated(userID: "bob", deliveryReceipts: false, readReceipts: nil))
        #expect(try driver.send(.messageDelivered(cid: Self.cid, userID: "bob", messageID: "m1", deliveredAt: nil)).isEmpty)
        #expect(try driver.send(.messageDelivered(cid: Self.cid, userID: "cat", messageID: "m1", deliveredAt: nil)).kinds
            == ["\(Self.cid)/message.delivered"])
        // Read privacy does not touch deliveries, nor delivery privacy reads.
        #expect(try driver.send(.messageRead(cid: Self.cid, userID: "bob", messageID: "m1", readAt: nil)).kinds
            == ["\(Self.cid)/message.read", "@bob/notification.mark_read"])
    }

    @Test func channelTypeToggleSuppressesReceiptsOfThatTypeOnly() throws {
        var driver = try Self.channel()
        try driver.send(.channelCreated(cid: "livestream:x", members: ["ann", "bob"]))
        try driver.send(.messageNew(cid: "livestream:x", message: message("l1", from: "ann")))
        try driver.send(.channelTypeUpdated(name: "livestream", deliveryEvents: false, readEvents: false))
        #expect(try driver.send(.messageDelivered(cid: "livestream:x", userID: "bob", messageID: "l1", deliveredAt: nil)).isEmpty)
        #expect(try driver.send(.messageRead(cid: "livestream:x", userID: "bob", messageID: "l1", readAt: nil)).kinds
            == ["@bob/notification.mark_read"])
        #expect(try driver.send(.messageRead(cid: Self.cid, userID: "bob", messageID: "m1", readAt: nil)).kinds
            == ["\(Self.cid)/message.read", "@bob/notification.mark_read"])
        #expect(driver.audit.map { $0["data"]?["reason"]?.stringValue } == ["channel_type", "channel_type"])
    }

    @Test func anAckAfterASettingChangeIsJudgedByTheNewSetting() throws {
        var driver = try Self.channel()
        try driver.send(.userUpdated(userID: "bob", deliveryReceipts: nil, readReceipts: false))
        #expect(try driver.send(.messageRead(cid: Self.cid, userID: "bob", messageID: "m1", readAt: nil)).kinds
            == ["@bob/notification.mark_read"])
        try driver.send(.userUpdated(userID: "bob", deliveryReceipts: nil, readReceipts: true))
        #expect(try driver.send(.messageRead(cid: Self.cid, userID: "bob", messageID: "m2", readAt: nil)).kinds
            == ["\(Self.cid)/message.read", "@bob/notification.mark_read"])
    }

    @Test func selfAddressedNotificationsAlwaysPass() throws {
        var driver = try Self.channel()
        try driver.send(.userUpdated(userID: "bob", deliveryReceipts: false, readReceipts: false))
        try driver.send(.channelTypeUpdated(name: "messaging", deliveryEvents: false, readEvents: false))
        #expect(try driver.send(.notificationMarkRead(cid: Self.cid, userID: "bob", readAt: nil)).kinds
            == ["@bob/notification.mark_read"])
        #expect(try driver.send(.notificationMarkUnread(cid: Self.cid, userID: "bob", messageID: "m2")).kinds
            == ["@bob/notification.mark_unread"])
    }

    @Test func everythingElsePassesUnchangedSettingsAndMembershipIncluded() throws {
        let filter = PrivacyFilter(policy: .read)
        var state = PrivacySettings()
        let events: [(String, [UInt8])] = [
            ("receipt-reducer/@bob/user.updated", FilterDriver.envelope(type: "user.updated", subject: "@bob",
                data: Array(#"{"user":{"id":"bob","privacy_settings":{"read_receipts":{"enabled":false}}}}"#.utf8), id: "a", time: nil)),
            ("receipt-reducer/messaging:g/member.added", FilterDriver.envelope(type: "member.added", subject: "messaging:g",
                data: Array(#"{"cid":"messaging:g","user_id":"bob"}"#.utf8), id: "b", time: nil)),
            ("receipt-reducer/messaging:g/message.new", FilterDriver.envelope(type: "message.new", subject: "messaging:g",
                data: Array(#"{"cid":"messaging:g","message":{"id":"m1","user_id":"bob","created_at":"2026-11-22T03:00:00.000Z"}}"#.utf8), id: "c", time: nil)),
            ("receipt-reducer/messaging:g/message.delivered", FilterDriver.envelope(type: "message.delivered", subject: "messaging:g",
                data: Array(#"{"cid":"messaging:g","user_id":"bob","last_delivered_message_id":"m1","last_delivered_at":null}"#.utf8), id: "d", time: nil)),
            ("receipt-reducer/messaging:g/typing.start", FilterDriver.envelope(type: "typing.start", subject: "messaging:g",
                data: Array(#"{"x":1}"#.utf8), id: "e", time: nil)),
        ]
        var output = PluginOutput(plugin: "read-privacy")
        for (n, (topic, bytes)) in events.enumerated() {
            try filter.handle(PluginEvent(seq: UInt64(n + 1), topic: topic, bytes: bytes), state: &state, output: &output)
        }
        #expect(output.forward == events.map(\.1))
        #expect(output.diagnostics.isEmpty)
    }

    @Test func everySuppressionIsAuditedOnDiagWithoutItsPayload() throws {
        var driver = try Self.channel()
        try driver.send(.userUpdated(userID: "bob", deliveryReceipts: false, readReceipts: false))
        try driver.send(.messageRead(cid: Self.cid, userID: "bob", messageID: "m2", readAt: "2026-11-22T04:00:00.000Z"))
        #expect(driver.audit.count == 1)
        let record = try #require(driver.audit.first)
        #expect(record["type"]?.stringValue == "receipt.suppressed")
        #expect(record["subject"]?.stringValue == Self.cid)
        let data = try #require(record["data"])
        #expect(data["type"]?.stringValue == "message.read")
        #expect(data["reason"]?.stringValue == "user_setting")
        #expect(data["policy"]?.stringValue == "read-privacy")
        #expect(data["seq"]?.int64Value != nil)
        guard case .object(let fields) = data else { Issue.record("data is not an object"); return }
        #expect(fields.map(\.key) == ["seq", "type", "reason", "policy"])
        // Nothing of the payload: not the user, the message or the time.
        let text = String(decoding: data.serialized(), as: UTF8.self)
        #expect(!text.contains("bob") && !text.contains("m2") && !text.contains("04:00"))
        // The reducer withheld it at the source (docs/events.md rule 19): the filter saw nothing to suppress.
        #expect(driver.filters[0].state.suppressed[.userSetting] == nil)
    }
}
