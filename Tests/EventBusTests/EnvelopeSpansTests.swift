import Testing

@testable import EventBus
@testable import EventBusCore

/// `envelopeSpans`, the broker's string-free path, vouches only for events the
/// string path accepts, and its ranges hold exactly the attributes that path reads.
@Suite struct EnvelopeSpansTests {
    /// The string path's answer at `stage`: `scanEnvelope` past `in`, `checkIngress` at `in`.
    static func stringPath(_ bytes: [UInt8], stage: String) -> Result<EnvelopeFields, EventValidationError> {
        Result { () throws(EventValidationError) in
            stage == Stage.in ? try EventValidator.checkIngress(bytes) : try EventValidator.scanEnvelope(bytes)
        }
    }

    static func spans(_ bytes: [UInt8], stage: String) -> EnvelopeSpans? {
        bytes.withUnsafeBytes { EventValidator.envelopeSpans($0, stage: stage) }
    }

    /// Records an issue when the spans vouch for an event the string path refuses or read it
    /// differently; returns whether the spans vouched.
    @discardableResult
    static func expectAgreement(_ bytes: [UInt8], stage: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let spans = spans(bytes, stage: stage) else { return false }
        let text = String(decoding: bytes, as: UTF8.self)
        guard case .success(let fields) = stringPath(bytes, stage: stage) else {
            Issue.record("spans vouch for an event the string path refuses at \(stage): \(text)", sourceLocation: sourceLocation)
            return true
        }
        func string(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        #expect(string(spans.id) == fields.id, "\(text)", sourceLocation: sourceLocation)
        #expect(string(spans.source) == fields.source, "\(text)", sourceLocation: sourceLocation)
        #expect(string(spans.type) == fields.type, "\(text)", sourceLocation: sourceLocation)
        #expect(string(spans.subject) == fields.subject, "\(text)", sourceLocation: sourceLocation)
        #expect(spans.hasTime == (fields.time != nil), "\(text)", sourceLocation: sourceLocation)
        #expect(spans.dataRange == fields.dataRange, "\(text)", sourceLocation: sourceLocation)
        return true
    }

    static let read = Array(
        #"{"specversion":"1.0","id":"bench-1-ab12","source":"/chat-api","type":"message.read","time":"2026-11-22T03:10:00.123Z","subject":"messaging:general","data":{"cid":"messaging:general","user_id":"bob","message_id":"m1"}}"#.utf8)

    @Test func aPlainMessageReadIsVouchedForAtEveryStage() throws {
        for stage in [Stage.in, "receipt-reducer", Stage.out] {
            #expect(Self.expectAgreement(Self.read, stage: stage))
        }
        let spans = try #require(Self.spans(Self.read, stage: Stage.in))
        #expect(Self.read[spans.id].elementsEqual("bench-1-ab12".utf8))
        #expect(Self.read[spans.subject].elementsEqual("messaging:general".utf8))
    }

    @Test(arguments: [
        #"{"specversion":"1.0","id":"a\u0062","source":"/s","type":"message.read","subject":"x","data":{}}"#,  // escaped id
        #"{"specversion":"1.0","id":"a","source":"/s","type":"user.updated","subject":"@bob","data":{"user":{"id":"bob"}}}"#,  // a rare type at in
        #"{"specversion":"1.0","id":"a","source":"/s","type":"message.read","subject":"messaging:other","data":{"cid":"messaging:general","user_id":"bob","message_id":"m1"}}"#,  // subject ≠ cid
        #"{"specversion":"1.0","id":"a","source":"/s","type":"message.read","subject":"messaging:general","time":"yesterday","data":{"cid":"messaging:general","user_id":"bob","message_id":"m1"}}"#,
    ])
    func whatItCannotVouchForAtInIsLeftToTheStringPath(event: String) {
        #expect(Self.spans(Array(event.utf8), stage: Stage.in) == nil)
    }

    @Test func pastInOnlyTheEnvelopeCounts() {
        let reply = Array(#"{"specversion":"1.0","id":"r:1","source":"/eventbus/receipt-reducer","type":"reply","subject":"receipts","replyto":"t.1","data":{"result":{}}}"#.utf8)
        #expect(Self.expectAgreement(reply, stage: "read-privacy"))
        #expect(Self.spans(reply, stage: Stage.in) == nil)
    }

    @Test(arguments: [31 as UInt64, 32, 33])
    func agreesWithTheStringPathOnGeneratedAndMutatedEvents(seed: UInt64) {
        var envelopes = EventGenerator(random: SplitMix64(seed: seed))
        var ingress = IngressEventGenerator(random: SplitMix64(seed: seed &* 7))
        var mutator = DocumentGenerator(random: SplitMix64(seed: seed &* 13))
        var vouched = 0, accepted = 0
        for _ in 0..<2_000 {
            for event in [Array(envelopes.event().utf8), Array(ingress.event().utf8)] {
                for bytes in [event, mutator.mutate(event)] {
                    for stage in [Stage.in, Stage.out] {
                        if Self.expectAgreement(bytes, stage: stage) { vouched += 1 }
                        if case .success = Self.stringPath(bytes, stage: stage) { accepted += 1 }
                    }
                }
            }
        }
        // Most valid events take the string-free path.
        #expect(vouched > accepted / 2, "vouched for \(vouched) of \(accepted) accepted")
    }
}
