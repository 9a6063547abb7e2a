import EventBus
import EventBusBroker
import ZeroMQ

/// The keys of one run of `eventbus up` with `--security`: each supervised plugin (and the
/// HTTP ingress) gets a fresh key pair, admitted with its role, and the readiness probe one
/// as `admin`. The keys reach a plugin in its environment only (never on a command line,
/// never on disk), so they rotate with every start.
public struct RunKeys: Sendable {
    /// The security file's configuration with this run's clients added: what the broker, or
    /// the JetStream gateway of `--backend`, admits.
    public let security: SecurityConfig
    /// Each plugin's keys (and `eventbus-http`'s), by name.
    public let pluginKeys: [String: CurveClientKeys]
    /// The readiness probe's keys.
    public let probeKeys: CurveClientKeys

    /// Generates the keys for the processes `config` supervises, over `security`.
    public init(config: SupervisorConfig, security base: SecurityConfig) throws {
        var security = base
        let serverKey = try security.publicKey
        var pluginKeys: [String: CurveClientKeys] = [:]
        for stage in config.pipeline.stages {
            guard case .process = stage.launch else { continue }
            let pair = try CurveKeyPair.generate()
            security.clients.removeAll { $0.name == "plugin:\(stage.name)" }
            security.clients.append(.init(name: "plugin:\(stage.name)", publicKey: pair.publicKey, roles: [.plugin(stage.name)]))
            pluginKeys[stage.name] = try CurveClientKeys(secretKey: pair.secretKey, serverKey: serverKey)
        }
        // The HTTP ingress publishes to `in`, queries, and streams `out` with the membership
        // events of `in` and the log's head (STATS): only `admin` may all of that, with a key of this run.
        if config.http != nil {
            let pair = try CurveKeyPair.generate()
            security.clients.removeAll { $0.name == HTTPIngressLaunch.name }
            security.clients.append(.init(name: HTTPIngressLaunch.name, publicKey: pair.publicKey, roles: [.admin]))
            pluginKeys[HTTPIngressLaunch.name] = try CurveClientKeys(secretKey: pair.secretKey, serverKey: serverKey)
        }
        let probe = try CurveKeyPair.generate()
        security.clients.append(.init(name: "eventbus-supervisor", publicKey: probe.publicKey, roles: [.admin]))
        self.security = security
        self.pluginKeys = pluginKeys
        self.probeKeys = try CurveClientKeys(secretKey: probe.secretKey, serverKey: serverKey)
    }
}
