import ArgumentParser
import EventBus
import Foundation

/// `eventbus publish`: NDJSON events from a file or stdin, or one event built from flags.
struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish events with confirms: NDJSON from FILE or stdin, or one event built from flags.",
        discussion: """
            One event per line; blank lines are skipped. Every line is sent as it is: the broker \
            checks it and an error names its line. Prints "published N events, SEQ a…b".
            Built from flags: --type T --subject S [--data JSON] [--source SRC] [--id ID].
            """)

    @OptionGroup var client: ClientOptions

    @Option(help: "The stage to publish to.")
    var stage: String = "in"

    @Argument(help: ArgumentHelp("NDJSON file; stdin when absent.", valueName: "FILE"))
    var file: String?

    @Option(help: "Build one event of this type (instead of reading NDJSON).")
    var type: String?

    @Option(help: "The built event's subject (a cid, @user or a type name).")
    var subject: String?

    @Option(help: ArgumentHelp("The built event's data, a JSON object.", valueName: "JSON"))
    var data: String = "{}"

    @Option(help: "The built event's source.")
    var source: String = "/cli"

    @Option(help: "The built event's id (generated when absent).")
    var id: String?

    @Option(help: ArgumentHelp("Events per PUB.", valueName: "N"))
    var batchSize: Int = 500

    func validate() throws {
        if type != nil {
            if file != nil { throw ValidationError("give either FILE or --type with its flags, not both") }
            guard subject != nil else { throw ValidationError("--type needs --subject") }
            let parsed = try? JSONSerialization.jsonObject(with: Data(data.utf8))
            guard parsed is [String: Any] else { throw ValidationError("--data must be a JSON object, got: \(data)") }
        } else if subject != nil || id != nil {
            throw ValidationError("--subject and --id build an event: give --type too")
        }
        guard (1...WireProtocol.maxBatchEvents).contains(batchSize) else {
            throw ValidationError("--batch-size must be 1 to \(WireProtocol.maxBatchEvents)")
        }
    }

    func run() async throws {
        let (events, lines) = try type.map { type in
            // Safe: validate() requires --subject with --type.
            let envelope = CloudEventEnvelope(
                id: id ?? UUID().uuidString.lowercased(), source: source, type: type,
                subject: subject!, data: data, time: Date())
            return ([Array(envelope.json.utf8)], [0])
        } ?? readEvents()
        let client = try await client.connectedClient()
        defer { client.close() }
        let showProgress = events.count >= 2_000
        let seqs: [UInt64]
        do {
            seqs = try await client.publishAll(events, stage: stage, batchSize: batchSize) { done in
                if showProgress { Output.stderr("\rpublished \(done)/\(events.count)") }
            }
            if showProgress { Output.stderr("\n") }
        } catch {
            if showProgress { Output.stderr("\n") }
            throw Output.fail(Self.located(error, lines: lines))
        }
        let noun = seqs.count == 1 ? "event" : "events"
        if let low = seqs.min(), let high = seqs.max() {
            Output.line(low == high ? "published \(seqs.count) \(noun), SEQ \(low)" : "published \(seqs.count) \(noun), SEQ \(low)…\(high)")
        } else {
            Output.line("published 0 events")
        }
    }

    /// The events of the NDJSON input and the line number (1-based) of each.
    func readEvents() throws -> ([[UInt8]], [Int]) {
        let input: [UInt8]
        do {
            if let file {
                input = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            } else {
                input = [UInt8](FileHandle.standardInput.readDataToEndOfFile())
            }
        } catch {
            throw Output.fail("cannot read \(file ?? "stdin"): \(error.localizedDescription)")
        }
        let split = NDJSON.events(in: input)
        return (split.events, split.lines)
    }

    /// A `publishAll` error restated with the input line(s) it is about: the line when the
    /// broker's message names an event index in the batch (`event K`), else the batch's lines.
    static func located(_ error: BusError, lines: [Int]) -> BusError {
        guard let range = BusClient.failedEventRange(of: error), range.upperBound < lines.count,
              let colon = error.message.firstIndex(of: ":") else { return error }
        let message = String(error.message[error.message.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        let place: String
        if let match = message.firstMatch(of: /\bevent (\d+)\b/), let k = Int(match.1), range.lowerBound + k <= range.upperBound {
            place = "line \(lines[range.lowerBound + k])"
        } else if range.count == 1 {
            place = "line \(lines[range.lowerBound])"
        } else {
            place = "lines \(lines[range.lowerBound])-\(lines[range.upperBound])"
        }
        return BusError(error.code, "\(place): \(message)")
    }
}
