import EventBusBroker
import EventBusSupervisor
import EventBusTesting
import Foundation
import Testing

/// docs/plugins.md's samples are the code that builds and runs: each Swift block
/// stands verbatim in an example that the package compiles, and each YAML block
/// is a configuration `eventbus up` accepts.
@Suite struct PluginGuideTests {
    static var root: URL { BuildFolder.root }

    static func blocks(_ language: String, in document: String = "docs/plugins.md") throws -> [String] {
        try MarkdownBlocks.blocks(language, in: document)
    }

    static func normalized(_ text: String) -> String { MarkdownBlocks.normalized(text) }

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
