import EventBusCore
import ReceiptReducer
import Testing

/// Paging through a `message_receipts` list while events keep arriving between
/// pages, on generated sequences, checked against the reference model at each
/// page, for channel messages and thread replies alike: every entry is in the
/// list then, with the time the model gives; user
/// ids only increase from page to page, so nobody is listed twice; and everyone
/// in the list at every page is listed.
@Suite struct ReceiptListPagingTests {
    /// Pages through one list of one message with events between pages; returns the first problem.
    static func check(seed: UInt64) -> String? {
        var generator = EventGenerator(seed: seed, lifeEvents: false)
        var rng = SplitMix64(seed: seed ^ 0x5171_0A6E)
        var reducer = ReceiptReducer()
        var model = ReferenceModel()
        func step() -> String? {
            let input = generator.next()
            let got = reducer.apply(input)
            return got == model.apply(input) ? nil : "seed \(seed): outputs differ at \(input.payload)"
        }
        for _ in 0..<(30 + rng.below(120)) { if let problem = step() { return problem } }
        let candidates = model.channels.filter { !$0.messages.isEmpty }
        guard !candidates.isEmpty else { return nil }
        let cid = candidates[rng.below(candidates.count)].cid
        let c = model.channelIndex(cid)!
        let messages = model.channels[c].messages
        // Any message: a reply's list is over its thread's participants.
        let position = rng.below(messages.count)
        let messageID = messages[position].id
        let list = ReceiptList.allCases[rng.below(4)]
        let pageSize = 1 + rng.below(3)

        /// The model's list now: user → the entry's time (`.null` for the lists without one).
        func members() -> [String: JSONValue] {
            var result: [String: JSONValue] = [:]
            for m in model.channels[c].others(position) {
                let passed = (list == .read || list == .unread) ? m.read >= position : m.delivered >= position
                guard passed == (list == .read || list == .delivered) else { continue }
                switch list {
                case .read: result[m.user] = ReferenceModel.time(ReferenceModel.passed(m.readCrossings, position))
                case .delivered: result[m.user] = ReferenceModel.time(ReferenceModel.passed(m.deliveredCrossings, position))
                case .unread, .undelivered: result[m.user] = .null
                }
            }
            return result
        }
        var steady = Set(members().keys)  // in the list at every page so far
        var listed: [String] = []
        var cursor: JSONValue = .null
        for page in 0..<60 {
            if page > 0 {
                for _ in 0..<rng.below(4) { if let problem = step() { return problem } }
            }
            let now = members()
            steady = steady.intersection(now.keys)
            var params: [(key: String, value: JSONValue)] = [
                (key: "cid", value: .string(cid)), (key: "message_id", value: .string(messageID)),
                (key: "viewer", value: .string("ann")), (key: "list", value: .string(list.rawValue)),
                (key: "page_size", value: num(pageSize)),
            ]
            if cursor != .null { params.append((key: "cursor", value: cursor)) }
            guard let bytes = try? reducer.query(method: "message_receipts", params: .object(params)),
                let reply = try? JSONParser.parse(bytes), case .array(let entries)? = reply["members"]
            else { return "seed \(seed): \(cid) \(messageID) \(list) page \(page) failed" }
            if entries.count > pageSize { return "seed \(seed): page \(page) over \(pageSize)" }
            for entry in entries {
                let user = entry["user_id"]?.stringValue ?? ""
                guard let time = now[user] else {
                    return "seed \(seed): \(cid) \(messageID) \(list) page \(page) lists \(user), not in the list now"
                }
                if time != .null && entry[list == .read ? "read_at" : "delivered_at"] != time {
                    return "seed \(seed): \(user)'s entry \(entry), the model's time \(time)"
                }
                if let previous = listed.last, previous >= user {
                    return "seed \(seed): \(cid) \(messageID) \(list): \(user) after \(previous)"
                }
                listed.append(user)
            }
            cursor = reply["next_cursor"] ?? .null
            if cursor == .null { break }
        }
        guard cursor == .null else { return "seed \(seed): cursors do not end" }
        for user in steady where !listed.contains(user) {
            return "seed \(seed): \(cid) \(messageID) \(list): \(user), in the list throughout, never listed"
        }
        return nil
    }

    @Test func pagingStaysExactWhileMembersKeepReading() {
        var failures = 0
        for seed in UInt64(0)..<1_500 {
            if let problem = Self.check(seed: seed) {
                failures += 1
                #expect(Bool(false), "\(problem)")
                if failures >= 3 { return }
            }
        }
    }
}
