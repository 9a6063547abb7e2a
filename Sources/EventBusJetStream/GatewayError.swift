import NATS

/// Why a gateway could not start.
public enum GatewayError: Error, Sendable, CustomStringConvertible {
    /// `--backend` is not a list of `nats://` servers.
    case badBackend(String, String)
    /// No server of the list could be reached.
    case unreachable(servers: [String], NATSError)
    /// The cluster answered but a stage's stream could not be made or read (no quorum,
    /// no JetStream).
    case streamUnavailable(stream: String, servers: [String], NATSError)
    /// The command endpoint could not be bound.
    case cannotBind(endpoint: String, String)

    public var description: String {
        switch self {
        case .badBackend(let value, let reason):
            "--backend \(value): \(reason)"
        case .unreachable(let servers, let error):
            "cannot reach the NATS cluster at \(ServerURL.redacted(servers)): \(error)"
                + (error.isTLS ? " (TLS: --backend-ca must name the authority that signs the servers' certificates, "
                    + "and a cluster reached with it must speak TLS)" : "")
        case .streamUnavailable(let stream, let servers, let error):
            "JetStream at \(ServerURL.redacted(servers)) cannot provide stream \(stream): \(error)"
        case .cannotBind(let endpoint, let reason):
            "cannot bind the command endpoint \(endpoint): \(reason)"
        }
    }
}
