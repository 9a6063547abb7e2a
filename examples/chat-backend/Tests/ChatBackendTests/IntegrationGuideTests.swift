import EventBus
import EventBusTesting
import Foundation
import Testing

/// docs/integration.md's samples are real: each Swift block stands verbatim in
/// examples/chat-backend (which its package compiles), and its shell block runs:
/// `chat-backend` with the flags shown, then each `curl` line against it and a real bus.
@Suite struct IntegrationGuideTests {
    static func blocks(_ language: String) throws -> [String] {
        try MarkdownBlocks.blocks(language, in: "docs/integration.md")
    }

    @Test func everySwiftSampleIsCodeOfTheExampleBackend() throws {
        let samples = try Self.blocks("swift")
        #expect(samples.count >= 2)
        let folder = BuildFolder.root.appendingPathComponent("examples/chat-backend/Sources")
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        #expect(files.count >= 5)
        let sources = files.map { MarkdownBlocks.normalized((try? String(contentsOf: $0, encoding: .utf8)) ?? "") }
        for sample in samples {
            #expect(sources.contains { $0.contains(MarkdownBlocks.normalized(sample)) }, "a Swift sample is not in examples/chat-backend: \(sample.prefix(80))")
        }
    }

    @Test func theShellSamplesRunAgainstABus() async throws {
        let commands = try Self.blocks("sh").flatMap { $0.components(separatedBy: "\n") }
        // The documented start line: the example's executable (wherever its build folder is) with flags.
        let start = try #require(commands.first { $0.split(separator: " ").first?.hasSuffix("debug/chat-backend") == true })
        let curls = commands.filter { $0.hasPrefix("curl ") }
        #expect(curls.count >= 5)

        let pipeline = try await ChatBackendTests.pipeline()
        try await pipeline.stopAfter {
            // The documented command, on the test's bus and a free port.
            var arguments = Array(start.split(separator: " ").dropFirst().map(String.init))
            let http = try #require(arguments.firstIndex(of: "--http"))
            arguments[http + 1] = "127.0.0.1:0"
            let command = try #require(arguments.firstIndex(of: "--command"))
            arguments[command + 1] = pipeline.supervisor.commandEndpoint
            try await TemporaryDirectory.with("chat-backend-guide") { directory in
                let stdout = directory.appendingPathComponent("stdout")
                let backend = try RunningProcess(BuildFolder.example("chat-backend") + "/chat-backend", arguments,
                                                 standardOutput: .file(stdout.path))
                func output() -> String { (try? String(contentsOf: stdout, encoding: .utf8)) ?? "" }
                let pattern = /listening on http:\/\/127\.0\.0\.1:(\d+)/
                let deadline = ContinuousClock.now + .seconds(30)
                while output().firstMatch(of: pattern) == nil, backend.isRunning, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))  // a poll interval
                }
                let ready = output()
                do {
                    let port = try #require(ready.firstMatch(of: pattern).map { String($0.1) }, "ready line: \(ready)")

                    for curl in curls {
                        let line = curl.replacingOccurrences(of: "localhost:8080", with: "127.0.0.1:\(port)")
                        let shell = try await RunningProcess.run("/bin/sh", ["-c", line.replacingOccurrences(of: "curl -s", with: "curl -s -f")])
                        let body = shell.standardOutput
                        #expect(shell.status == 0, "\(curl): \(body)")
                        // The body must be JSON (a body that does not parse fails, never passes as "no error").
                        let parsed: JSONValue
                        do { parsed = try JSONParser.parse(Array(body.utf8)) } catch {
                            Issue.record("\(curl): the reply is not JSON (\(error)): \(body)")
                            continue
                        }
                        #expect(parsed["error"] == nil, "\(curl): \(body)")
                    }
                } catch {
                    _ = try? await backend.terminate()
                    throw error
                }
                try await backend.terminate()
            }
        }
    }
}
