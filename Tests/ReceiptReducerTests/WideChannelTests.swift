import EventBusCore
import ReceiptReducer
import Testing

/// The reference model again, on one wide channel: thousands of members so the
/// reader list splits into many chunks, and reads dated in the past (and
/// senders' watermarks at their messages' `created_at`) insert into its middle.
@Suite struct WideChannelTests {
    /// Tens of seconds of CPU: on a thread of its own (``OwnThread``).
    @Test(arguments: [UInt64(1), 2])
    func wideChannelAgreesWithReferenceModel(seed: UInt64) async throws {
        let problem = await OwnThread.run { Result { try Self.check(seed: seed) } }
        #expect(try problem.get() == nil, "\(String(describing: try? problem.get()))")
    }

    /// The first difference between the reducer and the model, or nil.
    static func check(seed: UInt64) throws -> String? {
        var rng = SplitMix64(seed: seed)
        let cid = "team:wide"
        let users = (0..<2_500).map { "w\(($0 &* 7919) % 2_500)" }  // not in sorted order
        var reducer = ReceiptReducer()
        var model = ReferenceModel()
        var seq: UInt64 = 0
        func apply(_ payload: IngressPayload) -> Bool {
            seq += 1
            let input = ReducerInput(seq: seq, time: EventGenerator.time(Int(seq) * 10), payload: payload)
            let got = reducer.apply(input)
            let want = model.apply(input)
            return got == want
        }
        guard apply(.channelCreated(cid: cid, members: users)) else { return "seed \(seed) seq \(seq): channel.created" }
        for i in 0..<40 {
            let payload = IngressPayload.messageNew(cid: cid, message: NewMessage(
                id: "m\(i)", userID: users[rng.below(users.count)], createdAt: EventGenerator.time(i), silent: rng.chance(10)))
            guard apply(payload) else { return "seed \(seed) seq \(seq) \(payload)" }
        }
        for _ in 0..<6_000 {
            let user = users[rng.below(users.count)]
            let message = "m\(rng.below(40))"
            let payload: IngressPayload
            switch rng.below(10) {
            case 0..<5:
                let readAt = rng.chance(20) ? EventGenerator.time(rng.below(Int(seq) * 10 + 1)) : nil
                payload = .messageRead(cid: cid, userID: user, messageID: message, readAt: readAt)
            case 5..<7: payload = .messageDelivered(cid: cid, userID: user, messageID: message, deliveredAt: nil)
            case 7: payload = .notificationMarkUnread(cid: cid, userID: user, messageID: message)
            case 8: payload = .memberRemoved(cid: cid, userID: user)
            default: payload = .memberAdded(cid: cid, userID: user)
            }
            guard apply(payload) else { return "seed \(seed) seq \(seq) \(payload)" }
        }
        for i in stride(from: 0, to: 40, by: 7) {
            // Each pages with its own (opaque) cursor; the pages must agree.
            var cursor: JSONValue = .null
            var modelCursor: JSONValue = .null
            repeat {
                let members: [(key: String, value: JSONValue)] = [
                    (key: "cid", value: .string(cid)), (key: "message_id", value: .string("m\(i)")),
                    (key: "viewer", value: .string("w1")), (key: "page_size", value: num(100)),
                ]
                let params = JSONValue.object(cursor == .null ? members : members + [(key: "cursor", value: cursor)])
                let modelParams = JSONValue.object(
                    modelCursor == .null ? members : members + [(key: "cursor", value: modelCursor)])
                let got = try JSONParser.parse(reducer.query(method: "message_receipts", params: params))
                let want = try model.query(method: "message_receipts", params: modelParams).get()
                let same = GeneratedSequenceTests.opaqueCursor(got) == GeneratedSequenceTests.opaqueCursor(want)
                guard same else { return "seed \(seed) m\(i): got \(got), want \(want)" }
                cursor = got["next_cursor"] ?? .null
                modelCursor = want["next_cursor"] ?? .null
            } while cursor != .null
        }
        return nil
    }
}
