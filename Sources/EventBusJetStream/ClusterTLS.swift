/// The certificates of a cluster that speaks TLS, to clients and between its servers: every
/// server presents ``certificate`` and checks the others' against ``authorities``; clients
/// check the servers against ``authorities`` (`--backend-ca` of `eventbus gateway` and
/// `eventbus up`, docs/scale-out.md "A three-machine deployment").
public struct ClusterTLS: Sendable, Equatable {
    /// The servers' certificate, PEM (for three machines: one naming each machine, or one
    /// each, signed by ``authorities``).
    public var certificate: String
    /// Its private key, PEM.
    public var key: String
    /// The authorities that sign the servers' certificates, PEM; a self-signed certificate
    /// is its own.
    public var authorities: String

    public init(certificate: String, key: String, authorities: String? = nil) {
        self.certificate = certificate
        self.key = key
        self.authorities = authorities ?? certificate
    }

    /// The `tls { … }` block, for the client port (indent 0) or inside `cluster` (indent 2).
    func block(indent: Int) -> [String] {
        let pad = String(repeating: " ", count: indent)
        return [
            "\(pad)tls {",
            "\(pad)  cert_file: \(NodeConfig.quoted(certificate))",
            "\(pad)  key_file: \(NodeConfig.quoted(key))",
            "\(pad)  ca_file: \(NodeConfig.quoted(authorities))",
            "\(pad)  timeout: 5",
            "\(pad)}",
        ]
    }
}
