import EventBus
import EventBusPlugin
import PrivacyFilter
import ReceiptReducer
import Testing

/// docs/privacy.md "Counts on receipt events": after the filters, no count on a receipt event
/// includes a member whose receipts are hidden, and nothing of `redacted` reaches `out`.
@Suite struct CountRedactionTests {
    static let cid = PrivacyFilterTests.cid

    /// ann, bob, cat and dan; ann sent m1 and m2; cat read m1 and dan got m1 before hiding them.
    static func team(_ filters: [PrivacyFilter]) throws -> FilterDriver {
        var driver = FilterDriver(filters)
        try driver.send(.channelCreated(cid: cid, members: ["ann", "bob", "cat", "dan"]))
        try driver.send(.messageNew(cid: cid, message: message("m1", from: "ann")))
        try driver.send(.messageNew(cid: cid, message: message("m2", from: "ann")))
        try driver.send(.messageRead(cid: cid, userID: "cat", messageID: "m1", readAt: nil))
        try driver.send(.messageDelivered(cid: cid, userID: "dan", messageID: "m1", deliveredAt: nil))
        try driver.send(.userUpdated(userID: "cat", deliveryReceipts: nil, readReceipts: false))
        try driver.send(.userUpdated(userID: "dan", deliveryReceipts: false, readReceipts: nil))
        return driver
    }

    static func data(_ event: (topic: String, bytes: [UInt8])) throws -> JSONValue {
        try #require(try EventValidator.validate(event.bytes, stage: "any").envelope.data)
    }

    @Test func bothFiltersLeaveTheHiddenOutOfEveryCountAndDropRedacted() throws {
        var driver = try Self.team([PrivacyFilter(policy: .read), PrivacyFilter(policy: .delivery)])
        let reached = try driver.send(.messageRead(cid: Self.cid, userID: "bob", messageID: "m1", readAt: nil))
        let read = try #require(reached.first { $0.topic.hasSuffix("/message.read") })
        let data = try Self.data(read)
        // Over everyone: bob and cat read m1; bob, cat and dan got it.
        #expect(data["read_count"] == .number("1"))
        #expect(data["delivered_count"] == .number("2"))
        #expect(data["redacted"] == nil)
        // It is still the reducer's event: its envelope byte for byte, only `data` replaced.
        let envelope = try EventValidator.validate(read.bytes, stage: "any").envelope
        #expect(envelope.id.hasPrefix("r"))
        let head = #"{"specversion":"1.0","id":"\#(envelope.id)","source":"/test","type":"message.read","subject":"\#(Self.cid)","time":"\#(driver.time)","data":{"cid""#
        #expect(String(decoding: read.bytes, as: UTF8.self).hasPrefix(head))
    }

    @Test func eachFilterMovesOnlyItsOwnCount() throws {
        var reads = try Self.team([PrivacyFilter(policy: .read)])
        let afterRead = try Self.data(try #require(
            try reads.send(.messageRead(cid: Self.cid, userID: "bob", messageID: "m1", readAt: nil)).first { $0.topic.hasSuffix("/message.read") }))
        #expect(afterRead["read_count"] == .number("1"))
        #expect(afterRead["delivered_count"] == .number("3"))
        #expect(afterRead["redacted"] == .object([(key: "delivered_count", value: .number("2"))]))

        var deliveries = try Self.team([PrivacyFilter(policy: .delivery)])
        let afterDelivery = try Self.data(try #require(
            try deliveries.send(.messageRead(cid: Self.cid, userID: "bob", messageID: "m1", readAt: nil)).first { $0.topic.hasSuffix("/message.read") }))
        #expect(afterDelivery["read_count"] == .number("2"))
        #expect(afterDelivery["delivered_count"] == .number("2"))
        #expect(afterDelivery["redacted"] == .object([(key: "read_count", value: .number("1"))]))
    }

    @Test func aDeliveryEventsCountIsRedactedByTheDeliveryFilter() throws {
        var driver = try Self.team([PrivacyFilter(policy: .read), PrivacyFilter(policy: .delivery)])
        let reached = try driver.send(.messageDelivered(cid: Self.cid, userID: "bob", messageID: "m1", deliveredAt: nil))
        let data = try Self.data(try #require(reached.first { $0.topic.hasSuffix("/message.delivered") }))
        #expect(data["delivered_count"] == .number("2"))  // bob and cat; dan hides his
        #expect(data["redacted"] == nil)
    }

    @Test func anEventWithNothingRedactedPassesByteForByte() throws {
        let event = FilterDriver.envelope(
            type: "message.read", subject: Self.cid,
            data: Array(#"{"cid":"messaging:general","user_id":"bob","last_read_message_id":"m1","last_read":null,"read_count":1,"delivered_count":1}"#.utf8),
            id: "x", time: nil)
        #expect(try CountRedaction.redact(event, policy: .read) == nil)
        var output = PluginOutput(plugin: "read-privacy")
        var state = PrivacySettings()
        try PrivacyFilter(policy: .read).handle(PluginEvent(seq: 1, topic: "receipt-reducer/\(Self.cid)/message.read", bytes: event),
                                                 state: &state, output: &output)
        #expect(output.forward == [event])
    }
}
