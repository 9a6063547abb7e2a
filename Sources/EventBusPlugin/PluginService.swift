import EventBusJetStream
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
/// --log-level --metrics` (``PluginOptions``, with swift-argument-parser; `--help`
/// lists them), logs to standard error, and stops cleanly on SIGTERM or SIGINT with
/// exit status 0. A bad command line exits 2, a failure 1.
/// It locks the data directory first (``DataDirectoryLock``): a second copy of
/// the plugin on the same `--data-dir` exits 1 with an error naming the directory.
///
/// With `EVENTBUS_STATE=nats://…` in its environment (`eventbus up --backend` sets it),
/// the plugin runs on a JetStream cluster: it first takes its lease (``PluginLease``:
/// one live instance per NAME, the others wait), keeps its state in the cluster's KV
/// bucket (``KVPluginStore``) instead of `--data-dir`, and exits 1 if it loses the lease.
public enum PluginMain {

    /// Runs `plugin` until a signal, then exits; exits 1 on a fatal error, 2 on bad arguments.
    public static func run<P: Plugin>(_ plugin: P, arguments: [String] = Array(CommandLine.arguments.dropFirst())) async -> Never {
        await run(PluginOptions.self, arguments: arguments) { _ in plugin }
    }

    /// Runs the plugin `make` builds from its parsed command line, for a plugin with
    /// options of its own (a ``PluginArguments`` type beside ``PluginOptions``):
    ///
    /// ```swift
    /// await PluginMain.run(ReadPrivacyOptions.self) { options in
    ///     PrivacyFilter(policy: .read, reciprocity: options.reciprocity)
    /// }
    /// ```
    ///
    /// Exits like ``run(_:arguments:)``.
    public static func run<Options: PluginArguments, P: Plugin>(
        _ options: Options.Type, arguments: [String] = Array(CommandLine.arguments.dropFirst()),
        _ make: (Options) -> P
    ) async -> Never {
        let parsed: Options
        switch PluginCommandLine<Options>.read(arguments) {
        case .success(let options):
            parsed = options
        case .failure(let exit):
            if exit.status == 0 {
                print(exit.message)
            } else {
                FileHandle.standardError.write(Data((exit.message + "\n").utf8))
            }
            Foundation.exit(exit.status)
        }
        let level = parsed.plugin.level
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        // Made once for its name; the plugin that runs is made after the metrics backend is
        // installed, so that the instruments it creates report to it.
        let name = make(parsed).name
        let logger = Logger(label: "eventbus.plugin.\(name)")
        do {
            let configuration = try parsed.plugin.configuration(defaultName: name)
            // Held until the process ends (exit never returns): a second copy on this data dir refuses to start.
            let lock = try DataDirectoryLock(directory: configuration.dataDirectory, plugin: configuration.name)
            // Metrics first: instruments the plugin creates bind to the backend installed then.
            let metrics = try configuration.metricsAddress.map { address throws(MetricsServerError) in
                try MetricsServer(address: MetricsAddress(parsing: address), registry: MetricsBootstrap.prometheus(), logger: logger)
            }
            metrics?.start()
            defer { metrics?.stop() }
            let plugin = make(parsed)
            var store: (any PluginStore)?
            var lease: PluginLease?
            if let backend = ProcessInfo.processInfo.environment[KVPluginStore.environmentVariable], !backend.isEmpty {
                let servers = try GatewayConfig.servers(backend: backend)
                let authorities = ProcessInfo.processInfo.environment[KVPluginStore.authoritiesVariable].flatMap { $0.isEmpty ? nil : $0 }
                let holder = "\(ProcessInfo.processInfo.hostName):\(URL(fileURLWithPath: configuration.dataDirectory).standardizedFileURL.path)"
                let taken = try PluginLease(servers: servers, plugin: configuration.name, holder: holder,
                                            trustedCertificates: authorities, logger: logger)
                // Until it is ours: another live instance of this plugin holds it meanwhile.
                _ = try taken.acquire(until: { false })
                lease = taken
                if P.State.isPersistent {
                    store = try KVPluginStore(servers: servers, plugin: configuration.name, trustedCertificates: authorities)
                }
            }
            let runner = try PluginRunner(plugin: plugin, configuration: configuration, store: store, logger: logger)
            var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
                .init(service: BlockingService(name: "eventbus.plugin.\(configuration.name)", run: { try runner.run() }, stop: { runner.stop() }),
                      successTerminationBehavior: .gracefullyShutdownGroup),
            ]
            if let lease {
                // Stopped first at shutdown (the group stops in reverse), so the runner still
                // holds the lease while it commits; a lost lease stops the group, and the runner.
                services.append(.init(service: BlockingService(name: "eventbus.plugin.lease", run: { try lease.keep() }, stop: { lease.stop() }),
                                      successTerminationBehavior: .ignore, failureTerminationBehavior: .gracefullyShutdownGroup))
            }
            let group = ServiceGroup(configuration: .init(
                services: services,
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
            do {
                try await group.run()
            } catch {
                lease?.release()
                throw error
            }
            lease?.release()
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
