import ArgumentParser
import EventBusBroker
import EventBusJetStream
import EventBusSupervisor
import Foundation
import Logging
import ServiceLifecycle

/// `eventbus up`: the broker plus the pipeline's plugin processes, supervised.
struct UpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "up",
        abstract: "Run the broker and the pipeline's plugins, supervised (default receipt-reducer,read-privacy,delivery-privacy).",
        discussion: """
            Plugins named in --pipeline are executables of that name beside `eventbus`; external:NAME \
            is a plugin that connects by itself. A plugin that exits or is killed is restarted with \
            backoff. One line, "eventbus ready", is logged once every stage is consuming. SIGTERM or \
            SIGINT stop the plugins, then the broker, and exit 0.
            """)

    @OptionGroup var options: BrokerOptions

    @Option(help: ArgumentHelp("A YAML configuration file (data_dir, command, stream, fsync, security, allow_insecure_bind, allow_shared_data_dir, pipeline); flags win.", valueName: "FILE"))
    var config: String?

    @Option(help: ArgumentHelp(
        "Run on a NATS JetStream cluster instead of the embedded broker: a gateway on --command, the plugins against it, "
            + "their state under --data-dir (docs/scale-out.md). @FILE reads the URLs from FILE's first line "
            + "(DATA/users/gateway.url), keeping the password out of ps.",
        valueName: "nats://URLS|@FILE"))
    var backend: String?

    @Option(help: ArgumentHelp(
        "With --backend: the folder of `eventbus cluster up`'s users (DATA/users). Each plugin keeps its state and lease "
            + "under its own user, from DIR/plugin-NAME.url, which may write its own stage and state only (docs/scale-out.md).",
        valueName: "DIR"))
    var backendUsers: String?

    @Option(help: ArgumentHelp(
        "With --backend: the PEM file of the authorities that sign the servers' certificates. The gateway and each plugin "
            + "then reach the cluster over TLS only, checking each server (docs/scale-out.md).",
        valueName: "FILE"))
    var backendCa: String?

    @Option(help: ArgumentHelp(
        "Also run eventbus-http, CloudEvents over HTTP, listening on HOST:PORT, supervised like a plugin; it is found beside "
            + "eventbus or by EVENTBUS_HTTP (docs/http.md).",
        valueName: "HOST:PORT"))
    var http: String?

    /// The folder of this executable, where the built-in plugins live.
    static var pluginDirectory: String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent().path
    }

    func run() async throws {
        let logger = CLILogging.logger("eventbus.up", level: options.logLevel)
        let directory = Self.pluginDirectory
        var base = BrokerConfig()
        var pipeline: Pipeline?
        do {
            if let config {
                (base, pipeline) = try SupervisorConfig.load(path: config, base: base, pluginDirectory: directory)
            }
            if let list = options.pipeline {
                pipeline = try Pipeline.parse(list: list, pluginDirectory: directory)
            }
            if pipeline == nil {
                pipeline = try Pipeline.parse(list: Pipeline.defaultNames.joined(separator: ","), pluginDirectory: directory)
            }
        } catch {
            throw Output.fail(error)
        }
        guard let pipeline else { throw Output.fail("no pipeline") }
        var brokerConfig = try options.config(base: base)
        brokerConfig.pipeline = pipeline.names
        // Before the broker exists: its instruments bind to the backend installed now.
        let metrics = try options.startMetrics(logger: logger)
        defer { metrics?.stop() }
        var httpIngress: HTTPIngressLaunch?
        if let http {
            do { httpIngress = try HTTPIngressLaunch.find(listen: http, in: directory) } catch { throw Output.fail(error) }
        }
        let supervisor: Supervisor
        if backendUsers != nil && backend == nil { throw Output.fail("--backend-users needs --backend") }
        if backendCa != nil && backend == nil { throw Output.fail("--backend-ca needs --backend") }
        if let backend {
            // The plugins read it from wherever they run: an absolute path.
            let authorities = backendCa.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
            let value: String
            do { value = try GatewayConfig.backendValue(backend) } catch { throw Output.fail("\(error)") }
            supervisor = try Self.onJetStream(backend: value, users: backendUsers, authorities: authorities, broker: brokerConfig,
                                              pipeline: pipeline, http: httpIngress, logger: logger)
        } else {
            do {
                var config = SupervisorConfig(broker: brokerConfig, pipeline: pipeline)
                config.http = httpIngress
                supervisor = try Supervisor(config: config, logger: logger)
            } catch {
                throw Output.fail(error, "cannot start the broker (command \(brokerConfig.commandEndpoint), stream \(brokerConfig.streamEndpoint), "
                    + "data dir \(brokerConfig.dataDirectory))")
            }
        }
        logger.info("stages: \((["in"] + pipeline.names + ["out"]).joined(separator: " -> "))")
        let group = ServiceGroup(configuration: .init(
            services: [supervisor],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
    }

    /// The supervisor of `--backend`: a JetStream gateway bound on the command endpoint as
    /// its front, the plugins against it.
    static func onJetStream(backend: String, users: String?, authorities: String?, broker: BrokerConfig, pipeline: Pipeline,
                            http: HTTPIngressLaunch?, logger: Logger) throws -> Supervisor {
        var supervised = SupervisorConfig(broker: broker, pipeline: pipeline)
        supervised.http = http
        // Each plugin's own user, when the cluster has users: DIR/plugin-NAME.url, as `cluster up` wrote it.
        var own: [String: [String: String]] = [:]
        if let users {
            for name in pipeline.names {
                let path = URL(fileURLWithPath: users).appendingPathComponent("plugin-\(name).url").path
                // Read as `--backend @FILE` reads the gateway's: the file's first line.
                guard let urls = try? GatewayConfig.backendValue("@" + path) else {
                    throw Output.fail("--backend-users: no \(path) for plugin \(name) (eventbus cluster up --plugins \(pipeline.names.joined(separator: ",")) writes one per plugin)")
                }
                own[name] = [KVPluginStore.environmentVariable: urls]
            }
        }
        // With keys: this run's keys for the plugins and the readiness probe, admitted by the gateway.
        let keys: RunKeys?
        do {
            keys = try broker.security.map { try RunKeys(config: supervised, security: $0) }
        } catch {
            throw Output.fail(error)
        }
        let gateway: Gateway
        do {
            var config = GatewayConfig(
                servers: try GatewayConfig.servers(backend: backend), commandEndpoint: BindPolicy.bindable(broker.commandEndpoint),
                pipeline: pipeline.names, maxEventBytes: broker.maxEventBytes)
            config.trustedCertificates = authorities
            config.security = keys?.security
            gateway = try Gateway(config: config, logger: logger)
        } catch {
            throw Output.fail("gateway: \(error)")
        }
        do {
            return try Supervisor(config: supervised, front: GatewayFront(gateway: gateway),
                                  keys: keys,
                                  pluginEnvironment: [KVPluginStore.environmentVariable: backend]
                                      .merging(authorities.map { [KVPluginStore.authoritiesVariable: $0] } ?? [:]) { $1 },
                                  pluginEnvironments: own, logger: logger)
        } catch {
            throw Output.fail(error)
        }
    }
}

/// The JetStream gateway as the supervisor's front.
struct GatewayFront: BusFront {
    let gateway: Gateway
    var commandEndpoint: String { gateway.commandEndpoint }
    var streamEndpoint: String? { nil }
    var threadName: String { "eventbus.gateway" }
    func run() throws { gateway.run() }
    func stop() { gateway.stop() }
}
