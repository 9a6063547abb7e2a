import Testing

@testable import EventBus
@testable import EventBusCore

/// `loggedIngress`, how a plugin reads an ack the broker already judged at `in`: the same payload and
/// time as the full path for every event the broker logs there, and `nil` (so the full path) whenever it
/// cannot read plainly. Events of any other stage are judged by the ingress rules as before.
@Suite struct LoggedIngressTests {
    static func logged(_ bytes: [UInt8]) -> (time: String?, payload: IngressPayload)? {
        let type = (try? EventValidator.scanEnvelope(bytes)).flatMap { EventType(rawValue: $0.type) }
        guard let type else { return nil }
        return bytes.withUnsafeBytes { EventValidator.loggedIngress($0, type: type) }
    }

    /// For an event the broker would log at `in`: whether the logged read answered, and then that it
    /// answered as the full path does.
    @discardableResult
    static func expectAgreement(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let full = try? EventValidator.validate(bytes, stage: Stage.in), let (time, payload) = logged(bytes) else {
            return false
        }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(payload == full.payload, "\(text)", sourceLocation: sourceLocation)
        #expect(time == full.envelope.time, "\(text)", sourceLocation: sourceLocation)
        return true
    }

    @Test(arguments: ScannedIngressTests.receiptAndMembershipEvents)
    func theReceiptAndMembershipTypesAreReadAsTheFullPathReadsThem(type: String, data: String) {
        #expect(Self.expectAgreement(ScannedIngressTests.event(type, data)))
    }

    @Test func withoutATimeTheEventHasNone() throws {
        let bytes = Array(#"{"specversion":"1.0","id":"i1","source":"/api","type":"member.added","subject":"messaging:general","data":{"cid":"messaging:general","user_id":"bob"}}"#.utf8)
        let (time, payload) = try #require(Self.logged(bytes))
        #expect(time == nil)
        #expect(payload == .memberAdded(cid: "messaging:general", userID: "bob"))
    }

    @Test func whatItCannotReadPlainlyIsLeftToTheFullPath() {
        func event(_ type: String, _ data: String, subject: String = "messaging:general") -> [UInt8] {
            ScannedIngressTests.event(type, data, subject: subject)
        }
        // An escape in a member it reads, in an optional member, in the time.
        #expect(Self.logged(event("message.read", #"{"cid":"messaging:general","user_id":"b\u006fb","message_id":"m1"}"#)) == nil)
        #expect(Self.logged(event("message.read", #"{"cid":"messaging:general","user_id":"bob","message_id":"m1","read_at":"2026-11-22T03:10:01.000\u005a"}"#)) == nil)
        #expect(Self.logged(Array(#"{"specversion":"1.0","id":"i1","source":"/api","type":"member.added","subject":"messaging:general","time":"2026-11-22T03:10:00.123\u005a","data":{"cid":"messaging:general","user_id":"bob"}}"#.utf8)) == nil)
        // A member missing or not a string; no `data`; not JSON.
        #expect(Self.logged(event("message.read", #"{"cid":"messaging:general","user_id":"bob"}"#)) == nil)
        #expect(Self.logged(event("message.read", #"{"cid":"messaging:general","user_id":7,"message_id":"m1"}"#)) == nil)
        #expect(Self.logged(Array(#"{"specversion":"1.0","id":"i1","source":"/api","type":"member.added","subject":"messaging:general"}"#.utf8)) == nil)
        #expect(Self.logged(Array(#"{"specversion":"1.0","id":"i1","source":"/api","type":"member.added","data":{"cid":"messaging:general","user_id":"bob"}"#.utf8)) == nil)
        // Types it does not read.
        #expect(Self.logged(event("message.new", #"{"cid":"messaging:general","message":{"id":"m1","user_id":"bob","created_at":"2026-11-22T03:10:00.123Z"}}"#)) == nil)
        #expect(Self.logged(event("user.updated", #"{"user":{"id":"bob"}}"#, subject: "@bob")) == nil)
    }

    @Test(arguments: [51 as UInt64, 52, 53])
    func agreesWithTheFullPathOnEveryGeneratedEventTheBrokerWouldLog(seed: UInt64) {
        let read = ScannedIngressTests.generatedAndMutated(seed: seed).filter { Self.expectAgreement($0) }.count
        #expect(read > 300, "read by the logged path: \(read)")
    }

    /// The plugin's entry point: the logged read only for events of `in`; elsewhere (a plugin after
    /// another, reading what the broker checked by the envelope alone) the ingress rules still judge.
    @Test func onlyEventsOfStageInAreTrustedToHavePassedTheIngressRules() throws {
        let rulesBroken = ScannedIngressTests.event("message.read", #"{"cid":"messaging:general","user_id":"@bob","message_id":"m1"}"#)
        #expect(throws: EventValidationError.self) {
            _ = try PluginEvent(seq: 1, topic: "stage1/messaging:general/message.read", bytes: rulesBroken).ingressPayload()
        }
        let fine = ScannedIngressTests.event("message.read", #"{"cid":"messaging:general","user_id":"bob","message_id":"m1"}"#)
        for topic in ["in/messaging:general/message.read", "stage1/messaging:general/message.read"] {
            let read = try #require(try PluginEvent(seq: 1, topic: topic, bytes: fine).ingressPayload())
            #expect(read.type == .messageRead)
            #expect(read.time == "2026-11-22T03:10:00.123Z")
            #expect(read.payload == .messageRead(cid: "messaging:general", userID: "bob", messageID: "m1", readAt: nil))
        }
        #expect(PluginEvent(seq: 1, topic: "in/messaging:general/message.read", bytes: fine).isLoggedAtIn)
        #expect(!PluginEvent(seq: 1, topic: "stage1/messaging:general/message.read", bytes: fine).isLoggedAtIn)
        #expect(!PluginEvent(seq: 1, topic: "inbox/messaging:general/message.read", bytes: fine).isLoggedAtIn)
    }
}
