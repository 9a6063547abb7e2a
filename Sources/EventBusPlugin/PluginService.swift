import EventBusMetrics
import Foundation
import Logging
import EventBusService
import ServiceLifecycle

/// The `main` of a plugin executable.
///
/// ```swift
/// // Sources/my-plugin/main.swift
/// import EventBusPlugin
/// await PluginMain.run(MyPlugin())
/// ```
///
/// It reads `--name --input --output --command --data-dir --batch --credit
/// --log-level --metrics` (``PluginConfiguration/parse(_:defaultName:)``), logs to
/// standard error, and stops cleanly on SIGTERM or SIGINT with exit status 0.
/// It locks the data directory first (``DataDirectoryLock``): a second copy of
/// the plugin on the same `--data-dir` exits 1 with an error naming the directory.
public enum PluginMain {
    /// Runs `plugin` until a signal, then exits; exits 1 on a fatal error, 2 on bad arguments.
    public static func run<P: Plugin>(_ plugin: P, arguments: [String] = Array(CommandLine.arguments.dropFirst())) async -> Never {
        await run(flags: [], arguments: arguments) { _ in plugin }
    }

    /// Runs the plugin `make` builds from the parsed configuration, for a
    /// plugin with its own boolean `flags`:
    ///
    /// ```swift
    /// await PluginMain.run(flags: ["--reciprocity"]) { configuration in
    ///     ReadPrivacy(reciprocity: configuration.flags.contains("--reciprocity"))
    /// }
    /// ```
    ///
    /// Exits like ``run(_:arguments:)``.
    public static func run<P: Plugin>(flags: Set<String>, arguments: [String] = Array(CommandLine.arguments.dropFirst()),
                                      _ make: (PluginConfiguration) -> P) async -> Never {
        var level = Logger.Level.info
        if let index = arguments.firstIndex(of: "--log-level"), index + 1 < arguments.count,
           let parsed = Logger.Level(rawValue: arguments[index + 1]) {
            level = parsed
        }
        let chosen = level
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = chosen
            return handler
        }
        let probe = make(PluginConfiguration(name: "plugin"))
        let logger = Logger(label: "eventbus.plugin.\(probe.name)")
        do {
            let configuration = try PluginConfiguration.parse(arguments, defaultName: probe.name, flags: flags)
            // Held until the process ends (exit never returns): a second copy on this data dir refuses to start.
            let lock = try DataDirectoryLock(directory: configuration.dataDirectory, plugin: configuration.name)
            // Metrics first: instruments the plugin creates bind to the backend installed then.
            let metrics = try configuration.metricsAddress.map { address throws(MetricsServerError) in
                try MetricsServer(address: MetricsAddress(parsing: address), registry: MetricsBootstrap.prometheus(), logger: logger)
            }
            metrics?.start()
            defer { metrics?.stop() }
            let plugin = make(configuration)
            let runner = try PluginRunner(plugin: plugin, configuration: configuration, logger: logger)
            let group = ServiceGroup(configuration: .init(
                services: [.init(service: BlockingService(name: "eventbus.plugin.\(configuration.name)", run: { try runner.run() }, stop: { runner.stop() }),
                                 successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
            try await group.run()
            withExtendedLifetime(lock) { exit(0) }
        } catch let error as MetricsServerError {
            logger.critical("plugin failed", metadata: ["error.type": "\(error)"])
            exit(2)
        } catch let error as PluginError {
            logger.critical("plugin failed", metadata: ["error.type": "\(error)"])
            exit(error.kind == .usage ? 2 : 1)
        } catch {
            logger.critical("plugin failed", metadata: ["error.type": "\(error)"])
            exit(1)
        }
    }
}
