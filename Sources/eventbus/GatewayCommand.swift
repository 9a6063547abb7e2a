import ArgumentParser
import EventBus
import EventBusBroker
import EventBusJetStream
import EventBusService
import EventBusSupervisor
import Logging
import ServiceLifecycle

/// `eventbus gateway`: a stateless EB1 front whose events and consumers live in JetStream.
struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Serve EB1 (PUB, PUBS, CONSUME, ACK, CANCEL) on a NATS JetStream cluster. SIGTERM/SIGINT stop it.",
        discussion: """
            Each stage is a JetStream stream (EVENTBUS_<stage>, subject eventbus.<stage>); an event's \
            Nats-Msg-Id is its (stage, source, id); the OK carries each event's stream sequence once JetStream \
            acked it, and busy when it did not within --publish-timeout-ms. See docs/scale-out.md.
            """)

    @Option(help: ArgumentHelp("The cluster: nats://h1:4222,h2:4222,h3:4222 (a host without a port gets 4222), or @FILE "
                                   + "to read them from FILE's first line (DATA/users/gateway.url), keeping the password out of ps.",
                               valueName: "nats://URLS|@FILE"))
    var backend: String

    @Option(help: ArgumentHelp(
        "The PEM file of the authorities that sign the servers' certificates: the connection is then TLS and checks "
            + "each server (docs/scale-out.md, \"A three-machine deployment\").", valueName: "FILE"))
    var backendCa: String?

    @Option(help: ArgumentHelp("The command endpoint to bind (ROUTER; default tcp://127.0.0.1:7750).", valueName: "EP"))
    var endpoint: String = WireProtocol.defaultCommandEndpoint

    @Option(help: ArgumentHelp("Plugin stages between in and out, comma-separated, as the broker's --pipeline (default: none).",
                               valueName: "a,b,c"))
    var pipeline: String?

    @Option(help: ArgumentHelp("Copies of each stage's stream (default 3 with three servers or more, else 1).",
                               valueName: "N"))
    var replicas: Int?

    @Option(help: ArgumentHelp("How long a REQ waits for its reply, and a JetStream API call for its answer.", valueName: "N"))
    var requestTimeoutMs: Int = 5_000

    @Option(help: ArgumentHelp(
        "How long a PUB waits for JetStream's ack before it is answered busy (and sent again by its client): the wait "
            + "through a stream leader's election.", valueName: "N"))
    var publishTimeoutMs: Int = 2_000

    @Option(help: ArgumentHelp("JetStream's dedup window for (stage, source, id).", valueName: "SECONDS"))
    var dedupWindow: Int = 600

    @Option(help: ArgumentHelp(
        "How long JetStream waits for a consumer's ACK before delivering again (a CONSUME with resume gets what was "
            + "never acked at once; the EVTs a live gateway's clients hold are kept from it).", valueName: "SECONDS"))
    var ackWait: Int = 5

    @Option(help: ArgumentHelp("The largest event in bytes.", valueName: "N"))
    var maxEventBytes: Int = WireProtocol.defaultMaxEventBytes

    @Option(help: ArgumentHelp(
        "A YAML security file, as the broker's: the gateway's secret key file and the admitted client keys with their "
            + "roles (docs/security.md). Every connection is then CURVE, and the endpoint may be any address.",
        valueName: "FILE"))
    var security: String?

    @Flag(help: "Without --security, allow binding an endpoint other than loopback, ipc or inproc: anyone who reaches it may do anything.")
    var allowInsecureBind = false

    @Option(help: "Log level on stderr (trace, debug, info, notice, warning, error, critical).")
    var logLevel: Logger.Level = .info

    func validate() throws {
        if let replicas, !(1...5).contains(replicas) { throw ValidationError("--replicas must be 1 to 5") }
        if requestTimeoutMs <= 0 { throw ValidationError("--request-timeout-ms must be positive") }
        if publishTimeoutMs <= 0 { throw ValidationError("--publish-timeout-ms must be positive") }
        if dedupWindow <= 0 { throw ValidationError("--dedup-window must be positive") }
        if ackWait <= 0 { throw ValidationError("--ack-wait must be positive") }
        if maxEventBytes <= 0 { throw ValidationError("--max-event-bytes must be positive") }
        if security == nil && !allowInsecureBind && !BindPolicy.isLocal(endpoint) {
            throw ValidationError("--endpoint \(endpoint) is not loopback, ipc or inproc: give the gateway keys with --security, "
                + "or pass \(BindPolicy.insecureOption) to bind it without")
        }
    }

    func run() async throws {
        let logger = CLILogging.logger("eventbus.gateway", level: logLevel)
        let gateway: Gateway
        do {
            let stages = try pipeline.map { try Pipeline.parse(list: $0, pluginDirectory: nil).names } ?? []
            var config = GatewayConfig(
                servers: try GatewayConfig.servers(backend: GatewayConfig.backendValue(backend)), commandEndpoint: BindPolicy.bindable(endpoint),
                pipeline: stages, replicas: replicas, duplicateWindow: .seconds(dedupWindow),
                requestTimeout: .milliseconds(requestTimeoutMs), publishTimeout: .milliseconds(publishTimeoutMs),
                ackWait: .seconds(ackWait), maxEventBytes: maxEventBytes)
            config.trustedCertificates = backendCa
            if let security { config.security = try SecurityConfigFile.load(path: security) }
            gateway = try Gateway(config: config, logger: logger)
        } catch {
            throw Output.fail("gateway: \(error)")
        }
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: BlockingService(name: "eventbus.gateway", run: { gateway.run() }, stop: { gateway.stop() }))],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
    }
}
