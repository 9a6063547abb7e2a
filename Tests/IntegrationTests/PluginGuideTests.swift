import EventBusBroker
import EventBusSupervisor
import Foundation
import Testing

/// docs/plugins.md's samples are the code that builds and runs: each Swift block
/// stands verbatim in an example that the package compiles, and each YAML block
/// is a configuration `eventbus up` accepts.
@Suite struct PluginGuideTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func blocks(_ language: String, in document: String = "docs/plugins.md") throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
        var blocks: [String] = [], current: [String]?
        for line in text.components(separatedBy: "\n") {
            // A block inside a quote (`> ```sh`) counts as well.
            let code = line.hasPrefix("> ") ? String(line.dropFirst(2)) : line
            if current == nil, code == "```\(language)" {
                current = []
            } else if current != nil, code == "```" {
                blocks.append(current!.joined(separator: "\n"))  // non-nil: checked in this branch's condition
                current = nil
            } else {
                current?.append(code)
            }
        }
        return blocks
    }

    static func normalized(_ text: String) -> String {
        text.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "\n")
    }

    @Test func everySwiftSampleIsCodeThatTheExamplesCompile() throws {
        let samples = try Self.blocks("swift")
        #expect(samples.count >= 2)
        let examples = ["examples/plugins/identity/main.swift", "examples/plugins/counter/main.swift"]
            .map { Self.normalized((try? String(contentsOf: Self.root.appendingPathComponent($0), encoding: .utf8)) ?? "") }
        for sample in samples {
            #expect(examples.contains { $0.contains(Self.normalized(sample)) }, "a Swift sample is not in examples/plugins: \(sample.prefix(80))")
        }
    }

    @Test func everyYAMLSampleIsAConfigurationUpAccepts() throws {
        let samples = try Self.blocks("yaml")
        #expect(samples.count >= 2)
        // Built-in names resolve in the build folder, where `swift build` put the plugins.
        let binaries = SupervisedPipeline.binDirectory
        for sample in samples {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("plugins-guide-\(UUID().uuidString).yaml")
            try sample.write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let (_, pipeline) = try SupervisorConfig.load(path: file.path, base: BrokerConfig(), pluginDirectory: binaries)
            let loaded = try #require(pipeline)
            #expect(loaded.names.first == "receipt-reducer")
            #expect(loaded.names.contains("pyfilter"))
        }
    }
}
