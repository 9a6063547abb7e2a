import EventBusCore
import ReceiptReducer
import Testing

/// The reducer against the naive reference model on thousands of seeded random sequences.
@Suite struct GeneratedSequenceTests {
    static let sequencesPerBatch = 400
    static let batches: [UInt64] = Array(0..<8)

    /// A `message_receipts` reply with a non-null `next_cursor` replaced by a
    /// placeholder: the cursor is opaque, and the model writes its own.
    static func opaqueCursor(_ reply: JSONValue) -> JSONValue {
        guard case .object(let members) = reply else { return reply }
        return .object(members.map { $0.key == "next_cursor" && $0.value != .null ? (key: $0.key, value: .string("…")) : $0 })
    }

    /// Compares every query's answer for every channel, user and message. Returns the first difference.
    static func compareQueries(_ reducer: ReceiptReducer, _ model: ReferenceModel, rng: inout SplitMix64) -> String? {
        /// Runs a query on both; `modelParams` (the model's cursor) if given. Returns the problem, or the
        /// reducer's and the model's replies.
        func run(_ method: String, _ params: JSONValue, model modelParams: JSONValue? = nil)
            -> (String?, JSONValue?, JSONValue?)
        {
            let receipts = method == "message_receipts"
            func opaque(_ reply: JSONValue) -> JSONValue { receipts ? Self.opaqueCursor(reply) : reply }
            let expected = model.query(method: method, params: modelParams ?? params)
            let actual: Result<[UInt8], QueryError> = Result { () throws(QueryError) -> [UInt8] in
                try reducer.query(method: method, params: params)
            }
            if case .success = expected {
                // Every redacted view is checked: one that throws or does not parse is a failure, not skipped.
                let answer: QueryAnswer
                do { answer = try reducer.answer(method: method, params: params) } catch {
                    return ("\(method) \(params): the answer with views threw \(error)", nil, nil)
                }
                var got: [String: JSONValue] = [:]
                for view in answer.views ?? [] {
                    guard let parsed = try? JSONParser.parse(view.result) else {
                        return ("\(method) \(params): view \(view.key) does not parse", nil, nil)
                    }
                    got[view.key] = opaque(parsed)
                }
                let want = model.views(method: method, params: modelParams ?? params).mapValues { opaque($0) }
                if got != want { return ("\(method) \(params) views:\n  got  \(got)\n  want \(want)", nil, nil) }
            }
            switch (actual, expected) {
            case (.success(let bytes), .success(let want)):
                guard let got = try? JSONParser.parse(bytes) else { return ("\(method) \(params): unparsable reply", nil, nil) }
                return opaque(got) == opaque(want)
                    ? (nil, got, want) : ("\(method) \(params):\n  got  \(got)\n  want \(want)", nil, nil)
            case (.failure(let error), .failure(let want)):
                return error.code == want.code ? (nil, nil, nil) : ("\(method) \(params): \(error.code) vs \(want.code)", nil, nil)
            case (.success(let bytes), .failure(let want)):
                return ("\(method) \(params): got \(String(decoding: bytes, as: UTF8.self)), want \(want.code)", nil, nil)
            case (.failure(let error), .success(let want)):
                return ("\(method) \(params): got \(error.code), want \(want)", nil, nil)
            }
        }
        func obj(_ m: [(String, JSONValue)]) -> JSONValue { .object(m.map { (key: $0.0, value: $0.1) }) }
        for cid in EventGenerator.channels {
            for viewer in ["ann", "bob"] {
                let base: [(String, JSONValue)] = [("cid", .string(cid)), ("viewer", .string(viewer))]
                let (problem, whole, _) = run("channel_state", obj(base))
                if let problem { return problem }
                // Page through with a random page size (sometimes the default),
                // comparing every page, views included; then the concatenation.
                let pageSize = rng.chance(20) ? nil : 1 + rng.below(4)
                var cursor: JSONValue = .null
                var concatenated: [JSONValue] = []
                var pages = 0
                while true {
                    var params = base
                    if let pageSize { params.append(("page_size", .number(String(pageSize)))) }
                    if cursor != .null { params.append(("cursor", cursor)) }
                    let (problem, reply, _) = run("channel_state", obj(params))
                    if let problem { return "page \(pages): \(problem)" }
                    guard let reply else { break }  // an error both agree on (unknown channel)
                    pages += 1
                    guard case .array(let members)? = reply["members"] else { return "channel_state \(params): no members" }
                    if let pageSize, members.count > pageSize { return "channel_state \(params): page over \(pageSize)" }
                    if reply["hidden_member_count"] != whole?["hidden_member_count"] {
                        return "channel_state \(params): hidden_member_count differs from the unpaged reply"
                    }
                    concatenated += members
                    guard let next = reply["next_cursor"], next != .null else { break }
                    if pages > 100 { return "channel_state \(params): cursors do not end" }
                    cursor = next
                }
                if let whole, whole["members"] != .array(concatenated) {
                    return "channel_state \(cid) for \(viewer): pages of \(pageSize ?? 1000) concatenate to "
                        + "\(concatenated), unpaged \(whole["members"] ?? .null)"
                }
            }
        }
        for user in EventGenerator.users + ["zed", "nobody"] {
            if let problem = run("unread_counts", obj([("user_id", .string(user))])).0 { return problem }
        }
        for channel in model.channels {
            for parentID in channel.messages.map(\.id) + ["m-unknown"] {
                let viewer = rng.chance(50) ? "bob" : "ann"
                let params = obj([("cid", .string(channel.cid)), ("parent_id", .string(parentID)), ("viewer", .string(viewer))])
                if let problem = run("thread_state", params).0 { return problem }
            }
        }
        for channel in model.channels {
            for messageID in channel.messages.map(\.id) + ["m-unknown"] {
                // Page through, each side with its own cursor; the pages must agree.
                let pageSize = 1 + rng.below(4)
                var cursor: JSONValue = .null
                var modelCursor: JSONValue = .null
                for _ in 0..<20 {
                    let base: [(String, JSONValue)] = [
                        ("cid", .string(channel.cid)), ("message_id", .string(messageID)), ("viewer", .string(rng.chance(50) ? "bob" : "ann")),
                        ("page_size", .number(String(pageSize))),
                    ]
                    let params = cursor == .null ? base : base + [("cursor", cursor)]
                    let modelParams = modelCursor == .null ? base : base + [("cursor", modelCursor)]
                    let (problem, reply, want) = run("message_receipts", obj(params), model: obj(modelParams))
                    if let problem { return problem }
                    guard let next = reply?["next_cursor"], next != .null else { break }
                    cursor = next
                    modelCursor = want?["next_cursor"] ?? .null
                }
                // One of the four lists, paged, each page compared (views included), then
                // the pages together against the whole list in one page.
                let list = ["read", "delivered", "unread", "undelivered"][rng.below(4)]
                let viewer = rng.chance(50) ? "bob" : "ann"
                let base: [(String, JSONValue)] = [
                    ("cid", .string(channel.cid)), ("message_id", .string(messageID)), ("viewer", .string(viewer)),
                    ("list", .string(list)),
                ]
                let (problem, whole, _) = run("message_receipts", obj(base + [("page_size", .number("100"))]))
                if let problem { return problem }
                var listCursor: JSONValue = .null
                var concatenated: [JSONValue] = []
                for page in 0...20 {
                    var params = base + [("page_size", .number(String(pageSize)))]
                    if listCursor != .null { params.append(("cursor", listCursor)) }
                    let (problem, reply, _) = run("message_receipts", obj(params))
                    if let problem { return "\(list) page \(page): \(problem)" }
                    guard let reply else { break }  // an error both agree on (unknown message)
                    guard case .array(let members)? = reply["members"] else { return "\(params): no members" }
                    concatenated += members
                    guard let next = reply["next_cursor"], next != .null else { break }
                    if page == 20 { return "\(params): cursors do not end" }
                    listCursor = next
                }
                if let whole, whole["members"] != .array(concatenated) {
                    return "\(list) of \(messageID) in \(channel.cid) for \(viewer): pages of \(pageSize) concatenate to "
                        + "\(concatenated), one page \(whole["members"] ?? .null)"
                }
            }
        }
        return nil
    }

    /// Runs one seeded sequence; returns the first difference, if any.
    static func check(seed: UInt64) -> String? {
        var generator = EventGenerator(seed: seed)
        var rng = SplitMix64(seed: seed ^ 0xA5A5_5A5A)
        let length = 20 + rng.below(181)
        let snapshotAt = rng.below(length)
        let queryPoints = Set((0..<2).map { _ in rng.below(length) })
        var reducer = ReceiptReducer()
        var model = ReferenceModel()
        // Every other sequence pushes counts on new messages in channels of up to four (rule 24).
        let pushLimit = seed % 2 == 0 ? 4 : 0
        reducer.pushCountsUpTo = pushLimit
        model.pushLimit = pushLimit
        // Every third sequence keeps only a few messages per channel (rule 25), so that
        // channels forget their oldest, threads with them, while acks still name them.
        let retainLimit = seed % 3 == 1 ? 2 + Int(seed / 3 % 6) : 0
        reducer.retainMessages = retainLimit
        model.retainLimit = retainLimit
        var restored: ReceiptReducer?
        for step in 0..<length {
            let input = generator.next()
            let got = reducer.apply(input)
            let want = model.apply(input)
            if got != want {
                return "seed \(seed) step \(step) \(input.payload):\n  got  \(got)\n  want \(want)"
            }
            if var copy = restored {
                let again = copy.apply(input)
                restored = copy
                if again != want { return "seed \(seed) step \(step) after snapshot: \(again) vs \(want)" }
            }
            if step == snapshotAt {
                let bytes = reducer.encodeSnapshot()
                let decoded: ReceiptReducer
                do { decoded = try ReceiptReducer(snapshot: bytes) } catch { return "seed \(seed): snapshot did not decode: \(error)" }
                if decoded.encodeSnapshot() != bytes { return "seed \(seed) step \(step): snapshot does not round-trip" }
                restored = decoded
                restored?.pushCountsUpTo = pushLimit  // configuration, not in the snapshot
                restored?.retainMessages = retainLimit
            }
            if queryPoints.contains(step), let problem = compareQueries(reducer, model, rng: &rng) {
                return "seed \(seed) step \(step): \(problem)"
            }
        }
        if let problem = compareQueries(reducer, model, rng: &rng) { return "seed \(seed) end: \(problem)" }
        if let restored, let problem = compareQueries(restored, model, rng: &rng) {
            return "seed \(seed) end, restored from snapshot: \(problem)"
        }
        return nil
    }

    /// Minutes of CPU in all: each batch runs on a thread of its own (``OwnThread``).
    @Test("generated sequences: outputs, queries and snapshots agree with the reference model", arguments: batches)
    func reducerAgreesWithReferenceModel(batch: UInt64) async {
        let problems = await OwnThread.run { () -> [String] in
            var problems: [String] = []
            for i in 0..<UInt64(Self.sequencesPerBatch) {
                let seed = batch &* 1_000_003 &+ i &+ 0x5EED
                if let problem = Self.check(seed: seed) {
                    problems.append(problem)
                    if problems.count >= 3 { break }
                }
            }
            return problems
        }
        for problem in problems { #expect(Bool(false), "\(problem)") }
    }
}

extension GeneratedSequenceTests {
    /// Guards the property test against a degenerate generator: across 200
    /// sequences every output type and every rejection reason occurs, and
    /// every thread event.
    @Test func generatorExercisesEveryOutcome() {
        var seen: Set<String> = []
        for seed in UInt64(0)..<200 {
            var generator = EventGenerator(seed: seed)
            var reducer = ReceiptReducer()
            for _ in 0..<150 {
                for output in reducer.apply(generator.next()) {
                    seen.insert(output.type)
                    if output.type != "message.new", output.json["parent_id"] != nil { seen.insert("thread " + output.type) }
                    if output.type == "receipt.rejected", let data = try? JSONParser.parse(output.data),
                        let reason = data["reason"]?.stringValue
                    {
                        seen.insert(reason)
                    }
                }
            }
        }
        let expected: Set<String> = [
            "message.new", "message.deleted", "message.delivered", "message.read", "notification.mark_read",
            "notification.mark_unread", "notification.mark_all_read", "receipt.rejected", "unknown_channel", "not_member", "unknown_message",
            "own_message", "thread message.read", "thread message.delivered", "thread notification.mark_read",
            "thread notification.mark_unread", "banned", "notification.added_to_channel",
            "notification.removed_from_channel", "notification.message_deleted", "notification.channel_truncated",
            "notification.channel_hidden", "notification.channel_visible", "notification.channel_deleted",
            "notification.user_deleted",
        ]
        #expect(expected.subtracting(seen).isEmpty, "never produced: \(expected.subtracting(seen).sorted())")
    }
}
