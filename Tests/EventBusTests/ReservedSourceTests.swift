import Testing
@testable import EventBus
@testable import EventBusCore

/// Issue 15, hole 2: stage `in` refuses the bus's own sources (`/eventbus`, `/eventbus/…`) on
/// every path the broker may take (one scan into spans, the ingress scan, the parser), so that
/// nothing published there can hold a dedup identity a plugin will give a later output.
@Suite struct ReservedSourceTests {
    static func event(source: String) -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"receipt-reducer:7:0","source":"\#(source)","type":"message.read","subject":"messaging:general","time":"2026-11-22T03:10:00.123Z","data":{"cid":"messaging:general","user_id":"bob","message_id":"m42"}}"#.utf8)
    }

    @Test(arguments: ["/eventbus/receipt-reducer", "/eventbus/broker", "/eventbus", "/eventbus/", #"\/eventbus\/read-privacy"#])
    func aBusSourceIsRefusedAtIn(source: String) {
        let frame = Self.event(source: source)
        #expect(frame.withUnsafeBytes { EventValidator.envelopeSpans($0, stage: "in") } == nil)
        #expect(EventValidator.fastIngress(frame) == nil)
        for check in [{ _ = try EventValidator.checkIngress(frame) }, { _ = try EventValidator.validate(frame, stage: "in") }] {
            #expect {
                try check()
            } throws: { error in
                guard let error = error as? EventValidationError else { return false }
                return error.code == .badEvent && error.message.hasPrefix("source:") && error.message.contains("reserved")
            }
        }
    }

    @Test(arguments: ["/eventbusx", "/chat-api", "/eventbus-like", "/other/eventbus/x"])
    func otherSourcesPassAtIn(source: String) throws {
        let frame = Self.event(source: source)
        #expect(frame.withUnsafeBytes { EventValidator.envelopeSpans($0, stage: "in") } != nil)
        _ = try EventValidator.checkIngress(frame)
        _ = try EventValidator.validate(frame, stage: "in")
    }

    @Test func pastInAPluginsOwnSourceIsAccepted() throws {
        let frame = Self.event(source: "/eventbus/receipt-reducer")
        #expect(frame.withUnsafeBytes { EventValidator.envelopeSpans($0, stage: "receipt-reducer") } != nil)
        _ = try EventValidator.validate(frame, stage: "receipt-reducer")
    }
}
