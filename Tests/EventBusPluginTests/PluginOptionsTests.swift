import Testing

@testable import EventBusPlugin

/// A plugin's command line, read with swift-argument-parser: the flags of docs/plugins.md,
/// their defaults, and a plugin's own flags beside them.
@Suite struct PluginOptionsTests {
    func options(_ arguments: [String]) throws -> PluginOptions {
        try PluginCommandLine<PluginOptions>.read(arguments).get()
    }

    @Test func everyOptionHasADefault() throws {
        let configuration = try options([]).configuration(defaultName: "identity")
        #expect(configuration.name == "identity")
        #expect(configuration.inputStage == "in")
        #expect(configuration.outputStage == "out")
        #expect(configuration.commandEndpoint == WireProtocol.defaultCommandEndpoint)
        #expect(configuration.dataDirectory == ".eventbus/plugins/identity")
        #expect(configuration.batchSize == 500)
        #expect(configuration.credit == 5_000)
        #expect(configuration.metricsAddress == nil)
        #expect(try options([]).level == .info)
    }

    /// What `eventbus up` passes, and the rest a stage's `args` may add.
    @Test func theFlagsOfThePluginGuide() throws {
        let parsed = try options([
            "--name", "reducer", "--input", "in", "--output", "next", "--command", "ipc:///tmp/c.sock",
            "--data-dir", "/data/plugins/reducer", "--batch", "100", "--credit", "50",
            "--log-level", "debug", "--metrics", "127.0.0.1:9465",
        ])
        let configuration = try parsed.configuration(defaultName: "receipt-reducer")
        #expect(configuration.name == "reducer")
        #expect(configuration.outputStage == "next")
        #expect(configuration.commandEndpoint == "ipc:///tmp/c.sock")
        #expect(configuration.dataDirectory == "/data/plugins/reducer")
        #expect(configuration.batchSize == 100)
        #expect(configuration.credit == 100, "the credit holds at least one batch")
        #expect(configuration.metricsAddress == "127.0.0.1:9465")
        #expect(parsed.level == .debug)
    }

    @Test func helpListsTheFlagsAndExitsZero() {
        guard case .failure(let exit) = PluginCommandLine<PluginOptions>.read(["--help"]) else {
            Issue.record("--help parsed as options")
            return
        }
        #expect(exit.status == 0)
        for flag in ["--name", "--input", "--output", "--command", "--data-dir", "--batch", "--credit", "--log-level", "--metrics"] {
            #expect(exit.message.contains(flag), "\(flag) missing from the help")
        }
    }

    struct FilterOptions: PluginArguments {
        @OptionGroup var plugin: PluginOptions
        @Flag(help: "Withhold more.") var reciprocity = false
    }

    @Test func aPluginsOwnFlagsStandBesideTheCommonOnes() throws {
        let parsed = try PluginCommandLine<FilterOptions>.read(["--name", "f", "--reciprocity"]).get()
        #expect(parsed.reciprocity)
        #expect(parsed.plugin.name == "f")
        #expect(try PluginCommandLine<FilterOptions>.read(["--batch", "7"]).get().reciprocity == false)
        guard case .failure(let exit) = PluginCommandLine<PluginOptions>.read(["--reciprocity"]) else {
            Issue.record("a plugin without the flag accepted it")
            return
        }
        #expect(exit.status == 2)
    }
}
