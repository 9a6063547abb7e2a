import EventBus
import EventBusTesting
import Foundation
import Testing
import ZeroMQ

/// Runs the example of docs/security.md: its keygen commands, its security
/// file, its broker command line (a non-loopback bind, allowed with keys) and
/// its two `eventbus stats` lines with the outcome written beside them.
@Suite(.serialized) struct SecurityDocTests {
    @Test func theSecurityPageExampleRunsAsWritten() async throws {
        let root = BuildFolder.root
        let page = try String(contentsOf: root.appendingPathComponent("docs/security.md"), encoding: .utf8)
        let blocks = page.components(separatedBy: "```").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        let yaml = try #require(blocks.first { $0.hasPrefix("yaml\n# keys/security.yaml") }).dropFirst("yaml\n".count)
        let session = try #require(blocks.first { $0.contains("eventbus broker --security keys/security.yaml") })
        let lines = session.split(separator: "\n").map(String.init).filter { $0.hasPrefix("eventbus ") }

        #expect(lines.filter { $0.hasPrefix("eventbus keygen") }.count == 4)
        #expect(lines.filter { $0.hasPrefix("eventbus stats") }.count == 2)
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-doc-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: work.appendingPathComponent("keys"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        func words(_ line: String) -> [String] {
            let command = line.components(separatedBy: "  #").first ?? line
            return command.split(separator: " ").dropFirst().map { $0.hasPrefix("keys/") ? work.path + "/" + $0 : String($0) }
        }
        for line in lines where line.hasPrefix("eventbus keygen") {
            #expect(try await SecureBus.run(words(line)).code == 0, "\(line)")
        }
        try String(yaml).write(to: work.appendingPathComponent("keys/security.yaml"), atomically: true, encoding: .utf8)

        // The broker line, on free ports instead of 7750/7751.
        let ports = try EphemeralEndpoint.freePorts(2)
        let brokerLine = try #require(lines.first { $0.hasPrefix("eventbus broker") })
        var brokerWords = words(brokerLine).map {
            $0.replacingOccurrences(of: ":7750", with: ":\(ports[0])").replacingOccurrences(of: ":7751", with: ":\(ports[1])")
        }
        let command = try #require(brokerWords.firstIndex(of: "--command").map { brokerWords[$0 + 1] })
        let stream = try #require(brokerWords.firstIndex(of: "--stream").map { brokerWords[$0 + 1] })
        brokerWords.removeFirst()  // "broker": BrokerProcess adds it, with its own --command/--stream
        for option in ["--command", "--stream"] {
            if let index = brokerWords.firstIndex(of: option) { brokerWords.removeSubrange(index...(index + 1)) }
        }
        let admin = try CurveClientKeys(secretKeyFile: work.path + "/keys/ops.secret", serverKeyFile: work.path + "/keys/broker.pub")
        let broker = try BrokerProcess(arguments: brokerWords + ["--log-level", "warning"], command: command, stream: stream, probeKeys: admin)
        let context = try Context()
        try await broker.start(context: context)
        try await broker.terminateAfter {

            for line in lines where line.hasPrefix("eventbus stats") {
                let result = try await SecureBus.run(words(line) + ["--command", "tcp://127.0.0.1:\(ports[0])"])
                let comment = line.components(separatedBy: "# ").last?.trimmingCharacters(in: .whitespaces) ?? ""
                if comment == "works" {
                    #expect(result.code == 0, "\(line): \(result.stderr)")
                } else {
                    #expect(result.code != 0, "\(line)")
                    #expect(result.stderr.contains(comment), "\(line): stderr was \(result.stderr)")
                }
            }
        }
    }
}
