import Testing

@testable import EventBus
@testable import EventBusCore

/// `scannedIngress`, the plugins' string-light read of acks and membership, answers exactly as the
/// full path does whenever it answers.
@Suite struct ScannedIngressTests {
    static func scanned(_ bytes: [UInt8]) -> (envelope: EnvelopeFields, payload: IngressPayload)? {
        bytes.withUnsafeBytes { EventValidator.scannedIngress($0) }
    }

    @discardableResult
    static func expectAgreement(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let (envelope, payload) = scanned(bytes) else { return false }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let full = try? EventValidator.validate(bytes, stage: Stage.in) else {
            Issue.record("scannedIngress reads an event the full path refuses: \(text)", sourceLocation: sourceLocation)
            return true
        }
        #expect(full.payload == payload, "\(text)", sourceLocation: sourceLocation)
        var fields = envelope
        fields.dataRange = nil
        #expect(fields == EnvelopeFields(full.envelope), "\(text)", sourceLocation: sourceLocation)
        return true
    }

    static func event(_ type: String, _ data: String, subject: String = "messaging:general") -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"i1","source":"/api","type":"\#(type)","subject":"\#(subject)","time":"2026-11-22T03:10:00.123Z","data":\#(data)}"#.utf8)
    }

    /// One event of each receipt and membership type, with and without its optional time: `(type, data)`.
    static let receiptAndMembershipEvents = [
        ("message.read", #"{"cid":"messaging:general","user_id":"bob","message_id":"m1","read_at":"2026-11-22T03:10:01.000Z"}"#),
        ("message.read", #"{"cid":"messaging:general","user_id":"bob","message_id":"m1"}"#),
        ("message.delivered", #"{"cid":"messaging:general","user_id":"bob","message_id":"m1","delivered_at":"2026-11-22T03:10:01.000Z"}"#),
        ("message.delivered", #"{"cid":"messaging:general","user_id":"bob","message_id":"m1"}"#),
        ("notification.mark_read", #"{"cid":"messaging:general","user_id":"bob","read_at":"2026-11-22T03:10:01.000Z"}"#),
        ("notification.mark_read", #"{"cid":"messaging:general","user_id":"bob"}"#),
        ("notification.mark_unread", #"{"cid":"messaging:general","user_id":"bob","message_id":"m1"}"#),
        ("member.added", #"{"cid":"messaging:general","user_id":"bob"}"#),
        ("member.removed", #"{"cid":"messaging:general","user_id":"bob"}"#),
        ("message.deleted", #"{"cid":"messaging:general","message_id":"m1"}"#),
    ]

    @Test(arguments: receiptAndMembershipEvents)
    func theReceiptAndMembershipTypesAreReadByScans(type: String, data: String) {
        #expect(Self.expectAgreement(Self.event(type, data)))
    }

    @Test func messageNewAndTheRarerTypesAreLeftToTheFullPath() {
        #expect(Self.scanned(Self.event("message.new", #"{"cid":"messaging:general","message":{"id":"m1","user_id":"bob","created_at":"2026-11-22T03:10:00.123Z"}}"#)) == nil)
        #expect(Self.scanned(Self.event("user.updated", #"{"user":{"id":"bob"}}"#, subject: "@bob")) == nil)
        #expect(Self.scanned(Self.event("message.read", #"{"cid":"messaging:general","user_id":"b\u006fb","message_id":"m1"}"#)) == nil)
    }

    /// 3,000 generated ingress events of `seed`, each followed by a mutation of it.
    static func generatedAndMutated(seed: UInt64) -> [[UInt8]] {
        var ingress = IngressEventGenerator(random: SplitMix64(seed: seed))
        var mutator = DocumentGenerator(random: SplitMix64(seed: seed &* 17))
        var events: [[UInt8]] = []
        for _ in 0..<3_000 {
            let event = Array(ingress.event().utf8)
            events += [event, mutator.mutate(event)]
        }
        return events
    }

    @Test(arguments: [41 as UInt64, 42, 43])
    func agreesWithTheFullPathOnGeneratedAndMutatedEvents(seed: UInt64) {
        let read = Self.generatedAndMutated(seed: seed).filter { Self.expectAgreement($0) }.count
        #expect(read > 500, "read by scans: \(read)")
    }
}
