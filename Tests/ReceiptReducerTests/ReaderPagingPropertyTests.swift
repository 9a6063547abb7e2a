import EventBusCore
import ReceiptReducer
import Testing

/// Paging through a message's readers while events keep arriving between
/// pages, on generated sequences, checked against the reference model at each
/// page: every listed reader is a reader then, with the `last_read` the model
/// has, pages are newest first; over the whole paging, everyone who is a
/// reader at every page and whose read watermark never moves is listed exactly
/// once, and only a reader who moved can be listed twice.
@Suite struct ReaderPagingPropertyTests {
    /// Pages through one message with events between pages; returns the first problem.
    static func check(seed: UInt64) -> String? {
        var generator = EventGenerator(seed: seed, lifeEvents: false)
        var rng = SplitMix64(seed: seed ^ 0x9E37_79B9)
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
        // A channel message: a reply's receipts count its thread (ThreadTests).
        let channelMessages = messages.indices.filter { messages[$0].parent == nil }
        let position = channelMessages[rng.below(channelMessages.count)]
        let messageID = messages[position].id
        let pageSize = 1 + rng.below(3)

        /// The model's readers of the message now, by user: their move.
        func readers() -> [String: Int] {
            var result: [String: Int] = [:]
            for m in model.channels[c].others(position) where m.read >= position {
                result[m.user] = m.readMove
            }
            return result
        }
        let firstMoves = Dictionary(uniqueKeysWithValues: model.channels[c].members.map { ($0.user, $0.readMove) })
        var steady: Set<String> = Set(readers().keys)  // readers at every page, never moved so far
        var moved: Set<String> = []
        var listed: [String: Int] = [:]
        var cursor: JSONValue = .null
        for page in 0..<60 {
            if page > 0 {
                for _ in 0..<rng.below(4) { if let problem = step() { return problem } }
            }
            let now = readers()
            for m in model.channels[c].members where m.readMove != firstMoves[m.user] ?? m.readMove {
                moved.insert(m.user)
            }
            steady = steady.intersection(now.keys).subtracting(moved)
            var params: [(key: String, value: JSONValue)] = [
                (key: "cid", value: .string(cid)), (key: "message_id", value: .string(messageID)),
                (key: "viewer", value: .string("ann")), (key: "page_size", value: num(pageSize)),
            ]
            if cursor != .null { params.append((key: "cursor", value: cursor)) }
            guard let bytes = try? reducer.query(method: "message_receipts", params: .object(params)),
                let reply = try? JSONParser.parse(bytes), case .array(let page)? = reply["readers"]
            else { return "seed \(seed): \(cid) \(messageID) page \(page) failed" }
            var previous: ReferenceModel.Member?
            for entry in page {
                let user = entry["user_id"]?.stringValue ?? ""
                guard now[user] != nil, let i = model.channels[c].current(user) else {
                    return "seed \(seed): \(cid) \(messageID) page \(page) lists \(user), not a reader now"
                }
                let member = model.channels[c].members[i]
                guard entry["last_read"] == ReferenceModel.time(member.readTime) else {
                    return "seed \(seed): \(user)'s last_read \(entry) vs \(member.readTime ?? "null")"
                }
                if let previous, !ReferenceModel.newer(previous, member) {
                    return "seed \(seed): \(cid) \(messageID) page \(page): \(previous.user) before \(user)"
                }
                previous = member
                listed[user, default: 0] += 1
            }
            cursor = reply["next_cursor"] ?? .null
            if cursor == .null { break }
        }
        guard cursor == .null else { return "seed \(seed): cursors do not end" }
        for (user, times) in listed where times > 1 && !moved.contains(user) {
            return "seed \(seed): \(cid) \(messageID): \(user) listed \(times) times without moving"
        }
        for user in steady where listed[user] != 1 {
            return "seed \(seed): \(cid) \(messageID): \(user), a reader throughout who never moved, listed \(listed[user] ?? 0) times"
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
