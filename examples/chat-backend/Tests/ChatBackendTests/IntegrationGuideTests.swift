import EventBus
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

        let pipeline = try ChatBackendTests.pipeline()
        defer { pipeline.stop() }
        // The documented command, on the test's bus and a free port.
        var arguments = Array(start.split(separator: " ").dropFirst().map(String.init))
        let http = try #require(arguments.firstIndex(of: "--http"))
        arguments[http + 1] = "127.0.0.1:0"
        let command = try #require(arguments.firstIndex(of: "--command"))
        arguments[command + 1] = pipeline.supervisor.commandEndpoint
        let backend = Process()
        backend.executableURL = URL(fileURLWithPath: BuildFolder.example("chat-backend") + "/chat-backend")
        backend.arguments = arguments
        let output = Pipe()
        backend.standardOutput = output
        backend.standardError = FileHandle.nullDevice
        try backend.run()
        defer { backend.terminate(); backend.waitUntilExit() }
        let ready = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        let port = try #require(ready.firstMatch(of: /listening on http:\/\/127\.0\.0\.1:(\d+)/).map { String($0.1) }, "ready line: \(ready)")

        for curl in curls {
            let line = curl.replacingOccurrences(of: "localhost:8080", with: "127.0.0.1:\(port)")
            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/bin/sh")
            shell.arguments = ["-c", line.replacingOccurrences(of: "curl -s", with: "curl -s -f")]
            let reply = Pipe()
            shell.standardOutput = reply
            try shell.run()
            let body = reply.fileHandleForReading.readDataToEndOfFile()
            shell.waitUntilExit()
            #expect(shell.terminationStatus == 0, "\(curl): \(String(decoding: body, as: UTF8.self))")
            #expect((try? JSONParser.parse(Array(body)))?["error"] == nil, "\(curl)")
        }
    }
}
