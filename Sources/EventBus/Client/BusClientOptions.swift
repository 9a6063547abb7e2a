/// How a ``BusClient`` connects and how long it waits.
public struct BusClientOptions: Sendable {
    /// The broker's command endpoint (its ROUTER).
    public var endpoint: String
    /// The name this client gives in `HELLO` and in its log lines.
    public var name: String
    /// How long any call waits for its reply before failing with ``ErrorCode/timeout``.
    ///
    /// A client-side guard, on top of the broker's own `REQ` timeout; it covers a
    /// broker that is down or unreachable.
    public var requestTimeout: Duration
    /// How long an idempotent request (`PUB`, `STATS`, `PING`, `HELLO`) waits for its
    /// reply before it is sent again with the same CORR.
    public var resendAfter: Duration
    /// CURVE keys, for a broker that has keys configured; `nil` connects in the clear.
    public var curve: CurveClientKeys?
    /// Ordered publishing (docs/protocol.md, "Ordered publishing"): each connection asks
    /// for it before its first `PUB`, so that after a `PUB` refused `busy` (a full disk)
    /// no later one is appended before it is sent again. For a client whose events are
    /// one stream in one order (`eventbus publish`, ``BusClient/publishAll(_:stage:batchSize:window:progress:)``);
    /// not for one connection shared by unrelated publishers, which one that never retries would hold up.
    public var ordered = false

    /// Creates options; every argument has the protocol's default.
    ///
    /// - Parameters:
    ///   - endpoint: The broker's command endpoint.
    ///   - name: This client's name.
    ///   - requestTimeout: How long a call waits before failing with ``ErrorCode/timeout``.
    ///   - resendAfter: How long an idempotent request waits before it is sent again.
    ///   - curve: CURVE keys for a broker with keys configured (docs/security.md).
    public init(
        endpoint: String = WireProtocol.defaultCommandEndpoint,
        name: String = "client",
        requestTimeout: Duration = .seconds(10),
        resendAfter: Duration = .seconds(2),
        curve: CurveClientKeys? = nil
    ) {
        self.curve = curve
        self.endpoint = endpoint
        self.name = name
        self.requestTimeout = requestTimeout
        self.resendAfter = resendAfter
    }
}
