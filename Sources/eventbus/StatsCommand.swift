import ArgumentParser
import EventBus
import Foundation

/// `eventbus stats`: the broker's STATS as a table or JSON.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Print broker statistics (STATS) as a table, or --json.")

    @OptionGroup var client: ClientOptions

    @Flag(help: "Print the STATS JSON as the broker sent it.")
    var json = false

    func run() async throws {
        let client = try client.client()
        defer { client.close() }
        let reply: [UInt8]
        do {
            reply = try await client.stats()
        } catch {
            throw Output.fail(error, commandEndpoint: self.client.commandEndpoint, usesKeys: client.options.curve != nil)
        }
        if json {
            Output.bytes(reply + [0x0A])
            return
        }
        guard let stats = (try? JSONSerialization.jsonObject(with: Data(reply))) as? [String: Any] else {
            throw Output.fail("STATS reply is not a JSON object: \(String(decoding: reply.prefix(200), as: UTF8.self))")
        }
        Output.line(Self.table(stats))
    }

    /// The readable form: head SEQ, dedup hits, events per stage, consumers, rejections.
    static func table(_ stats: [String: Any]) -> String {
        var out: [String] = []
        if let heads = stats["head_seqs"] as? [String: Any] {
            // The JetStream gateway: a sequence per stage.
            out.append("head seqs   " + heads.keys.sorted().map { "\($0) \(text(heads[$0]))" }.joined(separator: ", "))
        } else {
            out.append("head seq    \(text(stats["head_seq"]))")
        }
        out.append("dedup hits  \(text(stats["dedup_hits"]))")
        let stages = (stats["stages"] as? [String: Any]) ?? [:]
        out.append("")
        out += columns([["STAGE", "EVENTS"]] + stages.keys.sorted().map { [$0, text(stages[$0])] }, right: [1])
        let consumers = (stats["consumers"] as? [[String: Any]]) ?? []
        out.append("")
        if consumers.isEmpty {
            out.append("no consumers")
        } else {
            let rows = consumers.map { consumer -> [String] in
                let prefixes = (consumer["prefixes"] as? [Any])?.map { text($0) }.joined(separator: ",") ?? text(consumer["prefixes"])
                let connected = (consumer["connected"] as? Bool).map { $0 ? "yes" : "no" } ?? text(consumer["connected"])
                return [text(consumer["name"]), prefixes, text(consumer["acked"]), text(consumer["lag"]), connected]
            }
            out += columns([["CONSUMER", "PREFIXES", "ACKED", "LAG", "CONNECTED"]] + rows, right: [2, 3])
        }
        let rejected = (stats["rejected"] as? [String: Any]) ?? [:]
        out.append("")
        if rejected.isEmpty {
            out.append("no rejections")
        } else {
            out += columns([["REJECTED", "COUNT"]] + rejected.keys.sorted().map { [$0, text(rejected[$0])] }, right: [1])
        }
        return out.joined(separator: "\n")
    }

    /// A JSON value as a cell.
    static func text(_ value: Any?) -> String {
        switch value {
        case nil, is NSNull: "-"
        case let string as String: string
        case let number as NSNumber: number.stringValue
        case let other?: "\(other)"
        }
    }

    /// Rows padded into columns; the columns in `right` are right-aligned.
    static func columns(_ rows: [[String]], right: Set<Int>) -> [String] {
        let widths = (0..<(rows.map(\.count).max() ?? 0)).map { column in
            rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0
        }
        return rows.map { row in
            row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return right.contains(column) ? pad + cell : cell + pad
            }.joined(separator: "  ").replacing(/\s+$/, with: "")
        }
    }
}
