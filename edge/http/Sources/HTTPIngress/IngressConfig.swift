/// How `eventbus-http` runs: where it listens, the broker it publishes to, who may use it.
public struct IngressConfig: Sendable {
    /// Where the HTTP server listens.
    public var listen: ListenAddress
    /// The broker's command endpoint.
    public var commandEndpoint: String
    /// The bearer tokens and their roles; none lets every request in.
    public var access: IngressAccess
    /// Listen on an address other than loopback without tokens (`--allow-insecure-bind`).
    public var allowInsecureBind: Bool
    /// The service that answers `POST /v1/query/{method}`.
    public var service = "receipts"
    /// The largest body taken: the bus's batch limit, 4 MiB of events (413 `too_large` above).
    public var maxBodyBytes = 4_194_304
    /// The certificate and key of HTTPS (`--tls-cert`, `--tls-key`); nil for plain HTTP.
    public var tls: TLSFiles?
    /// The origins whose pages may call from a browser (`--cors-origin`).
    public var cors = CORSPolicy.none
    /// How `GET /v1/stream` paces and bounds its clients.
    public var stream = StreamSettings()
    /// The common part of the streams' durable consumer names: one per server on a bus.
    /// `eventbus-http.pPORT` for a fixed port, so that a restarted server reuses its names;
    /// with port 0, a random one.
    public var streamConsumerBase: String

    public init(listen: ListenAddress, commandEndpoint: String, access: IngressAccess, allowInsecureBind: Bool = false) {
        self.listen = listen
        self.commandEndpoint = commandEndpoint
        self.access = access
        self.allowInsecureBind = allowInsecureBind
        streamConsumerBase = listen.port == 0
            ? "eventbus-http.r" + String(UInt32.random(in: 0...UInt32.max), radix: 16) : "eventbus-http.p\(listen.port)"
    }

    /// Refuses to listen beyond this machine without tokens, as the broker refuses to bind
    /// beyond it without keys (docs/security.md, "Safe defaults").
    /// TLS keeps the traffic private but says nothing of who may publish: it is no substitute.
    public func validate() throws(IngressError) {
        guard !listen.isLoopback, !access.requiresToken, !allowInsecureBind else { return }
        throw IngressError("refusing to listen on \(listen) without bearer tokens: anyone who reaches it could publish to the bus "
            + "and query every receipt. Listen on loopback (127.0.0.1:PORT), give tokens (--security FILE with http_tokens, "
            + "see docs/http.md), or pass --allow-insecure-bind to accept the risk")
    }
}
