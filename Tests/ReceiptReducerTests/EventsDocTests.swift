import EventBusCore
import Foundation
import ReceiptReducer
import Testing

/// Runs the examples of `docs/events.md` against the code: the page is only
/// right if these pass.
///
/// The page marks its examples with the info string of fenced code blocks
/// (see "How this page is tested" at its end):
///
/// - ```` ```json ingress ````: a catalogue ingress event; must pass `EventValidator` at stage `in`;
/// - ```` ```json egress ````: a catalogue egress event; must pass the envelope checks and have
///   the data fields the reducer writes for its type;
/// - ```` ```json step=N input ````: the worked example's step N, an ingress event, applied with SEQ N;
/// - ```` ```json step=N output ````: a JSON array of exactly the events the reducer emits for step N;
/// - ```` ```json query=METHOD after=N params ```` followed by ```` ```json query=METHOD after=N reply ````:
///   a `receipts` query asked after step N and its result;
/// - ```` ```json pushed ````: a `notification.message_new` the reducer sends with pushed counts
///   (PushedCountsTests runs the worked example with them on);
/// - any other ```` ```json ```` block must be valid JSON.
@Suite struct EventsDocTests {
    @Test func workedGroupChatExampleMatchesTheReducer() throws {
        let doc = try EventsDoc.load()
        let example = try WorkedExample(doc)
        try #require(example.steps.count >= 10, "the worked example has too few steps")
        let tables = try doc.unreadTables()
        try #require(!tables.isEmpty, "the worked example has no unread table")
        var reducer = ReceiptReducer()
        try example.runQueries(after: 0, on: reducer)
        for step in example.steps {
            let produced = try step.apply(to: &reducer)
            for output in produced {
                // Outputs are told apart on the page by type: receipt.* go to diag, everything else to out.
                #expect(output.stage == (output.type.hasPrefix("receipt.") ? Stage.diag : Stage.out), "\(output)")
            }
            example.checkOutputs(of: step, produced)
            try example.runQueries(after: step.number, on: reducer)
            for table in tables { table.check(after: step.number, reducer) }
        }
    }

    @Test func everyIngressExampleValidates() throws {
        let doc = try EventsDoc.load()
        var types = Set<String>()
        for block in doc.blocks where block.words.contains("ingress") {
            do {
                let event = try EventValidator.validate(Array(block.text.utf8), stage: Stage.in)
                #expect(event.payload != nil, "docs/events.md line \(block.line)")
                types.insert(event.envelope.type)
            } catch {
                Issue.record("docs/events.md line \(block.line): the ingress example is refused: \(error)")
            }
        }
        let ingress = Set(EventType.allCases.filter(\.isIngress).map(\.wireName))
        #expect(types == ingress, "every ingress type needs an example; missing \(ingress.subtracting(types).sorted())")
    }

    @Test func everyWorkedExampleInputValidates() throws {
        let doc = try EventsDoc.load()
        for block in doc.blocks where block.words.contains("input") {
            do {
                let event = try EventValidator.validate(Array(block.text.utf8), stage: Stage.in)
                #expect(event.envelope.time != nil, "docs/events.md line \(block.line): give the input a time")
            } catch {
                Issue.record("docs/events.md line \(block.line): the input is refused: \(error)")
            }
        }
    }

    @Test func everyEgressExampleHasTheReducersFields() throws {
        let doc = try EventsDoc.load()
        // The data keys of every output the worked example documents (checked against the reducer above), by type.
        var fields: [String: Set<[String]>] = [:]
        for block in doc.blocks where block.words.contains("output") {
            guard case .array(let events) = try block.json() else { continue }
            for event in events {
                guard let type = event["type"]?.stringValue, let data = event["data"] else { continue }
                fields[type, default: []].insert(EventsDoc.keys(of: data))
            }
        }
        var types = Set<String>()
        for block in doc.blocks where block.words.contains("egress") {
            let event: ValidatedEvent
            do {
                event = try EventValidator.validate(Array(block.text.utf8), stage: Stage.out)
            } catch {
                Issue.record("docs/events.md line \(block.line): the egress example is refused: \(error)")
                continue
            }
            let type = event.envelope.type
            types.insert(type)
            let keys = EventsDoc.keys(of: event.envelope.data ?? .null)
            switch type {
            case EventType.messageNew.wireName, EventType.messageDeleted.wireName:
                // The ingress data, unchanged: it must be a valid ingress data object.
                let ingress = JSONValue.object([
                    (key: "specversion", value: .string("1.0")), (key: "id", value: .string("x")),
                    (key: "source", value: .string("/x")), (key: "type", value: .string(type)),
                    (key: "subject", value: .string(event.envelope.subject)),
                    (key: "data", value: event.envelope.data ?? .null),
                ])
                #expect(
                    (try? EventValidator.validate(ingress, stage: Stage.in)) != nil,
                    "docs/events.md line \(block.line): \(type) data must be valid ingress data")
            case EventType.receiptSuppressed.wireName:
                // Written by the privacy filters, not the reducer: the fields its section lists.
                #expect(keys == ["seq", "type", "reason", "policy"], "docs/events.md line \(block.line)")
            default:
                #expect(
                    fields[type]?.contains(keys) == true,
                    """
                    docs/events.md line \(block.line): \(type) data has keys \(keys); \
                    the reducer writes \(fields[type].map { $0.sorted { $0.lexicographicallyPrecedes($1) } } ?? [])
                    """)
            }
            if type.hasPrefix("receipt.") || type.hasPrefix("notification.") {
                continue
            }
            #expect(event.envelope.subject == event.envelope.data?["cid"]?.stringValue, "docs/events.md line \(block.line)")
        }
        let egress: Set<String> = [
            "message.new", "message.deleted", "message.delivered", "message.read", "notification.mark_read",
            "notification.mark_unread", "notification.mark_all_read", "receipt.rejected", "receipt.suppressed",
            "notification.added_to_channel", "notification.removed_from_channel", "notification.message_deleted",
            "notification.channel_truncated", "notification.channel_hidden", "notification.channel_visible",
            "notification.channel_deleted", "notification.user_deleted",
        ]
        #expect(types == egress, "every egress type needs an example; missing \(egress.subtracting(types).sorted())")
        let outputTypes = Set(fields.keys)
        #expect(
            outputTypes == egress.subtracting(["receipt.suppressed"]),
            "the worked example should show every type the reducer emits; missing \(egress.subtracting(outputTypes).sorted())")
    }

    @Test func everyJSONExampleParses() throws {
        let doc = try EventsDoc.load()
        #expect(doc.blocks.count >= 40)
        for block in doc.blocks {
            do {
                _ = try block.json()
            } catch {
                Issue.record("docs/events.md line \(block.line): not valid JSON: \(error)")
            }
            let unknown = block.words.subtracting(EventsDoc.roles)
            #expect(unknown.isEmpty, "docs/events.md line \(block.line): unknown marker \(unknown.sorted())")
            let unknownKeys = Set(block.attributes.keys).subtracting(EventsDoc.attributeNames)
            #expect(unknownKeys.isEmpty, "docs/events.md line \(block.line): unknown attribute \(unknownKeys.sorted())")
        }
    }
}

// MARK: - The page

/// One fenced ```` ```json ```` block of the page.
struct DocBlock: Sendable {
    /// The 1-based line of the opening fence.
    var line: Int
    /// The bare words of the info string after `json`: `ingress`, `input`, …
    var words: Set<String>
    /// The `key=value` words of the info string: `step`, `query`, `after`.
    var attributes: [String: String]
    /// The block's content.
    var text: String

    func json() throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    func number(_ name: String) throws -> Int {
        guard let text = attributes[name], let value = Int(text) else {
            throw DocError("docs/events.md line \(line): \(name)=N required")
        }
        return value
    }
}

struct DocError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `docs/events.md`, split into its JSON blocks.
struct EventsDoc: Sendable {
    static let roles: Set<String> = ["ingress", "egress", "input", "output", "params", "reply", "pushed"]
    static let attributeNames: Set<String> = ["step", "query", "after"]

    /// The package's docs folder: this file is `Tests/ReceiptReducerTests/EventsDocTests.swift`.
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs")

    var blocks: [DocBlock] = []
    /// The whole page.
    var markdown: String
    /// The page's path from the repository root, for messages (`docs/events.md`).
    var page = "docs/events.md"

    /// `docs/events.md`, or another page of worked examples in the same form (`privacy.md`).
    static func load(_ name: String = "events.md") throws -> EventsDoc {
        let text = try String(contentsOfFile: folder.appendingPathComponent(name).path, encoding: .utf8)
        var doc = try EventsDoc(markdown: text)
        doc.page = "docs/" + name
        return doc
    }

    /// Every fenced block whose info string starts with `json`; fences are lines starting with ```` ``` ````.
    init(markdown: String) throws {
        self.markdown = markdown
        var open: (line: Int, info: [Substring])?
        var content: [Substring] = []
        for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            guard line.hasPrefix("```") else {
                if open != nil { content.append(line) }
                continue
            }
            if let current = open {
                guard line.trimmingCharacters(in: .whitespaces) == "```" else {
                    throw DocError("docs/events.md line \(index + 1): a fence opens inside the block of line \(current.line)")
                }
                if current.info.first == "json" {
                    var words = Set<String>()
                    var attributes: [String: String] = [:]
                    for word in current.info.dropFirst() {
                        if let equals = word.firstIndex(of: "=") {
                            attributes[String(word[..<equals])] = String(word[word.index(after: equals)...])
                        } else {
                            words.insert(String(word))
                        }
                    }
                    blocks.append(DocBlock(
                        line: current.line, words: words, attributes: attributes,
                        text: content.joined(separator: "\n")))
                }
                open = nil
                content = []
            } else {
                open = (index + 1, line.dropFirst(3).split(separator: " "))
            }
        }
        if let open { throw DocError("docs/events.md line \(open.line): the block is not closed") }
    }

    /// The event the runtime publishes for `output` (PluginOutput's envelope), as a JSON value.
    static func envelope(of output: ReducerOutput, seq: Int, n: Int, time: String) -> JSONValue {
        .object([
            (key: "specversion", value: .string("1.0")),
            (key: "id", value: .string("receipt-reducer:\(seq):\(n)")),
            (key: "source", value: .string("/eventbus/receipt-reducer")),
            (key: "type", value: .string(output.type)),
            (key: "subject", value: .string(output.subject)),
            (key: "time", value: .string(time)),
            (key: "data", value: (try? JSONParser.parse(output.data)) ?? .null),
        ])
    }

    /// A JSON array as the page writes it: per event, its attributes on one line and its `data` on the next.
    static func render(_ events: [JSONValue]) -> String {
        guard !events.isEmpty else { return "[]" }
        let lines = events.map { event -> String in
            guard case .object(let members) = event else { return " " + text(event) }
            let attributes = members.filter { $0.key != "data" }
            var line = " " + String(text(.object(attributes)).dropLast())
            if let data = event["data"] { line += ",\n  \"data\":" + text(data) }
            return line + "}"
        }
        return "[\n" + lines.joined(separator: ",\n") + "\n]"
    }

    static func text(_ value: JSONValue) -> String { String(decoding: value.serialized(), as: UTF8.self) }

    static func keys(of value: JSONValue) -> [String] {
        guard case .object(let members) = value else { return [] }
        return members.map(\.key)
    }

    /// The tables after a line `<!-- events-doc: unread_messages CID -->`: for each row, the step and each
    /// user's documented `unread_messages` in CID (`nil` for `—`).
    func unreadTables() throws -> [UnreadTable] {
        var tables: [UnreadTable] = []
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
        let marker = "<!-- events-doc: unread_messages "
        for (index, line) in lines.enumerated() where line.hasPrefix(marker) {
            let cid = line.dropFirst(marker.count).split(separator: " ").first.map(String.init) ?? ""
            var table = UnreadTable(line: index + 1, cid: cid)
            for row in lines[(index + 1)...].prefix(while: { $0.hasPrefix("|") }) {
                let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                if cells.allSatisfy({ $0.allSatisfy { ":-".contains($0) } }) { continue }  // the |---| row
                if table.users.isEmpty {
                    table.users = Array(cells.dropFirst())
                    continue
                }
                guard let step = Int(cells[0]), cells.count == table.users.count + 1 else {
                    throw DocError("docs/events.md line \(index + 1): a bad row in the unread table: \(row)")
                }
                let counts = try cells.dropFirst().map { cell -> Int? in
                    if cell == "—" { return nil }
                    guard let count = Int(cell) else { throw DocError("docs/events.md: \(cell) is not a count") }
                    return count
                }
                table.rows[step] = counts
            }
            guard !table.users.isEmpty, !table.rows.isEmpty else {
                throw DocError("docs/events.md line \(index + 1): no table after the marker")
            }
            tables.append(table)
        }
        return tables
    }
}

/// A documented table of `unread_messages` per step and user.
struct UnreadTable {
    var line: Int
    var cid: String
    var users: [String] = []
    var rows: [Int: [Int?]] = [:]

    /// Compares row `step` (if any) with the reducer.
    func check(after step: Int, _ reducer: ReceiptReducer) {
        guard let row = rows[step] else { return }
        let actual = users.map { reducer.unreadMessages(cid: cid, userID: $0) }
        if actual != row {
            let cells = actual.map { $0.map(String.init) ?? "—" }
            Issue.record(
                """
                docs/events.md line \(line): unread_messages in \(cid) after step \(step) differ from the reducer's: \
                | \(step) | \(cells.joined(separator: " | ")) |
                """)
        }
    }
}

// MARK: - The worked example

/// The steps and queries of the worked example, in order.
struct WorkedExample {
    struct Step {
        var number: Int
        var event: ValidatedEvent
        var time: String
        var documentedOutputs: JSONValue
        var outputLine: Int

        func apply(to reducer: inout ReceiptReducer) throws -> [ReducerOutput] {
            let payload = try #require(event.payload)
            return reducer.apply(
                ReducerInput(seq: UInt64(number), time: time, payload: payload, data: event.envelope.data))
        }
    }

    struct Query {
        var method: String
        var after: Int
        var params: JSONValue
        var reply: JSONValue
        var line: Int
    }

    var steps: [Step] = []
    var queries: [Query] = []
    /// The page the example is on, for messages.
    var page: String

    init(_ doc: EventsDoc) throws {
        page = doc.page
        let inputs = doc.blocks.filter { $0.words.contains("input") }
        let outputs = doc.blocks.filter { $0.words.contains("output") }
        let numbers = try inputs.map { try $0.number("step") }
        guard numbers == Array(1...max(1, inputs.count)) else {
            throw DocError("the inputs must be steps 1, 2, 3, … in order; they are \(numbers)")
        }
        guard try outputs.map({ try $0.number("step") }) == numbers else {
            throw DocError("every step needs exactly one output block, in order")
        }
        for (input, output) in zip(inputs, outputs) {
            guard input.line < output.line else {
                throw DocError("\(page) line \(output.line): the output comes after its input")
            }
            let event = try EventValidator.validate(Array(input.text.utf8), stage: Stage.in)
            guard let time = event.envelope.time else {
                throw DocError("\(page) line \(input.line): give the input a time")
            }
            let documented = try output.json()
            guard case .array = documented else {
                throw DocError("\(page) line \(output.line): the outputs must be a JSON array")
            }
            steps.append(Step(
                number: try input.number("step"), event: event, time: time, documentedOutputs: documented,
                outputLine: output.line))
        }

        let blocks = doc.blocks.filter { $0.attributes["query"] != nil }
        guard blocks.count % 2 == 0 else { throw DocError("every query params block needs a reply block") }
        for index in stride(from: 0, to: blocks.count, by: 2) {
            let params = blocks[index]
            let reply = blocks[index + 1]
            guard params.words.contains("params"), reply.words.contains("reply"),
                params.attributes == reply.attributes
            else {
                throw DocError("\(page) line \(params.line): a params block, then its reply with the same query= and after=")
            }
            let after = try params.number("after")
            guard (0...steps.count).contains(after) else {
                throw DocError("\(page) line \(params.line): after=\(after) names no step")
            }
            queries.append(Query(
                method: params.attributes["query"] ?? "", after: after, params: try params.json(),
                reply: try reply.json(), line: reply.line))
        }
        guard !queries.isEmpty else { throw DocError("the page has no queries") }
    }

    /// Compares what the reducer `produced` for `step` with the page's output block,
    /// recording the block to paste when they differ.
    func checkOutputs(of step: Step, _ produced: [ReducerOutput]) {
        let expected = produced.enumerated().map { n, output in
            EventsDoc.envelope(of: output, seq: step.number, n: n, time: step.time)
        }
        guard step.documentedOutputs != .array(expected) else { return }
        Issue.record(
            """
            \(page) line \(step.outputLine): step \(step.number)'s outputs differ from the reducer's. \
            It emits:
            ```json step=\(step.number) output
            \(EventsDoc.render(expected))
            ```
            """)
    }

    /// Asks the queries documented after step `after` and compares the replies.
    func runQueries(after: Int, on reducer: ReceiptReducer) throws {
        for query in queries where query.after == after {
            let reply: JSONValue
            do {
                reply = try JSONParser.parse(try reducer.query(method: query.method, params: query.params))
            } catch {
                Issue.record("\(page) line \(query.line): the \(query.method) query after step \(after) fails: \(error)")
                continue
            }
            if reply != query.reply {
                Issue.record(
                    """
                    \(page) line \(query.line): the \(query.method) reply after step \(after) differs. \
                    The reducer answers:
                    \(String(decoding: reply.serialized(), as: UTF8.self))
                    """)
            }
        }
    }
}
