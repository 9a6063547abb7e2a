import EventBus
import EventBusTesting
import Foundation
import Testing

/// docs/http.md's curl examples, run in order against the servers it describes: each
/// answers with the status, headers and body shape of the `http` block that follows it.
@Suite(.serialized) struct HTTPDocTests {
    /// The JSON members compared by value; the others (SEQs, counts) only by presence.
    static let exactMembers: Set<String> = ["type", "title", "status", "code", "field", "event"]

    static func members(_ value: JSONValue) -> [String: JSONValue] {
        guard case .object(let members) = value else { return [:] }
        return Dictionary(members.map { ($0.key, $0.value) }) { first, _ in first }
    }

    /// A documented stream against the one got: the same events (by type and subject) in
    /// the same order, each with a SEQ `id:` and its CloudEvent on one `data:` line.
    static func compareStreams(_ got: HTTPExchange, _ documented: HTTPExchange, _ command: String) {
        // A Markdown block ends with one line end: the blank line after its last event is implied.
        let (gotEvents, documentedEvents) = (SSEReader.messages(got.text).filter { $0.comment == nil },
                                             SSEReader.messages(documented.text + "\n").filter { $0.comment == nil })
        let shape = { (event: SSEReader.Message) in "\(event.event ?? "-") \(event.json?["subject"]?.stringValue ?? "-")" }
        #expect(gotEvents.map(shape) == documentedEvents.map(shape), "\(command): \(got.text)")
        for event in gotEvents {
            #expect(event.seq != nil && event.json?["type"]?.stringValue == event.event, "\(command): \(event)")
        }
        #expect(SSEReader.messages(got.text).first?.comment == SSEReader.messages(documented.text).first?.comment, "\(command): \(got.text)")
    }

    @Test func theCurlExamplesAnswerAsDocumented() async throws {
        let document = DocumentedServers.document
        let text = try String(contentsOf: BuildFolder.root.appendingPathComponent(document), encoding: .utf8)
        let commands = try MarkdownBlocks.blocks("sh", in: document).filter { $0.hasPrefix("curl ") }
        let answers = try MarkdownBlocks.blocks("http", in: document)
        try #require(commands.count == answers.count, "each curl example is followed by its answer")
        #expect(commands.count >= 10)
        // The examples under "## Tokens" go to the server with the doc's security file.
        let tokensSection = try #require(text.range(of: "\n## Tokens\n")).lowerBound
        var from = text.startIndex
        var secured: [Bool] = []
        for command in commands {
            let found = try #require(text.range(of: command, range: from..<text.endIndex))
            secured.append(found.lowerBound > tokensSection)
            from = found.upperBound
        }
        #expect(secured.contains(true) && secured.contains(false))

        try await DocumentedServers.run { servers in
            var earlier: [String: HTTPExchange] = [:]
            for (index, command) in commands.enumerated() {
                let port = secured[index] ? servers.secured.port : servers.openPort
                let line = command.replacingOccurrences(of: "localhost:8080", with: "127.0.0.1:\(port)")
                let run = try await RunningProcess.run("/bin/sh", ["-c", line])
                // A stream (curl -N) ends when curl's --max-time does: curl's exit 28.
                let streaming = command.contains(" -N ")
                try #require(run.status == 0 || (streaming && run.status == 28), "\(command): \(run.standardError)")
                let got = try HTTPExchange.parse(run.standardOutput)
                let documented = try HTTPExchange.parse(answers[index].replacingOccurrences(of: "\n", with: "\r\n"))
                #expect(got.status == documented.status, "\(command): \(got.text)")
                for (name, value) in documented.headers {
                    #expect(got.headers[name] == value, "\(command): header \(name)")
                }
                if documented.headers["content-type"] == "text/event-stream" {
                    Self.compareStreams(got, documented, command)
                    continue
                }
                let (gotJSON, documentedJSON) = (Self.members(try got.json()), Self.members(try documented.json()))
                #expect(Set(gotJSON.keys) == Set(documentedJSON.keys), "\(command): \(got.text)")
                for key in Self.exactMembers where documentedJSON[key] != nil {
                    #expect(gotJSON[key] == documentedJSON[key], "\(command): \(key) in \(got.text)")
                }
                if case .array(let seqs)? = documentedJSON["seqs"], case .array(let gotSeqs)? = gotJSON["seqs"] {
                    #expect(gotSeqs.count == seqs.count, "\(command): \(got.text)")
                }
                // A repeated example is a retry: the same answer, SEQs included.
                let key = "\(secured[index]) \(command)"
                if let first = earlier[key] { #expect(got.body == first.body, "\(command): a retry answers as the first time") }
                earlier[key] = got
            }
        }
    }
}
