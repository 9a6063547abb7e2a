import Foundation
import EventBus
import EventBusBroker
import NATS

/// How an `eventbus gateway` reaches its cluster and serves EB1.
public struct GatewayConfig: Sendable, Equatable {
    /// The NATS servers, such as `nats://10.0.0.1:4222`.
    public var servers: [String]
    /// The command endpoint the gateway binds (ROUTER), as the broker's `--command`.
    public var commandEndpoint: String
    /// The plugin stages between `in` and `out`.
    public var pipeline: [String]
    /// Copies of each stage's stream: 3 (R3) by default with three servers or more, else 1.
    public var replicas: Int
    /// JetStream's duplicate window: the broker keeps identities 10 minutes.
    public var duplicateWindow: Duration
    /// How long a REQ waits for its reply, and a JetStream API call for its answer.
    public var requestTimeout: Duration
    /// How long a PUB's batch waits for JetStream's ack before it is answered `busy`: the
    /// longest a publisher waits through a stream leader's election before it sends again
    /// (a resend is deduplicated), so shorter than ``requestTimeout``.
    public var publishTimeout: Duration
    /// How long JetStream waits for a consumer's ack before delivering the message again:
    /// how soon the events a dead gateway had sent come back. The EVTs a live gateway's
    /// clients hold are marked in progress every third of it.
    public var ackWait: Duration
    public var maxEventBytes: Int
    /// Events published and not acked at most; the gateway reads no command meanwhile.
    public var maxEventsInFlight: Int
    /// The name the gateway's NATS connection shows (`/connz`).
    public var connectionName: String
    /// After a PUB answered `busy`, how long the same connection's later PUBs are refused
    /// unless one resends it (``OrderedPublisher``).
    public var orderFence: Duration
    /// The services a REQ may name before any plugin declared one in HELLO (the broker's default).
    public var services: [String] = ["receipts"]
    /// How long the gateway waits, when it makes a stage's stream, for enough peers to be
    /// online to place its replicas (a cluster that just started, or one node still
    /// coming back); then it exits naming the servers.
    public var peerWait: Duration = .seconds(30)
    /// The authorities that sign the servers' certificates (PEM, `--backend-ca`): the
    /// connection is then TLS and checks each server; `nil` for plain TCP.
    public var trustedCertificates: String?
    /// CURVE keys and roles (`--security`, the broker's file and rules, docs/security.md):
    /// every connection encrypted, unlisted keys refused, each command checked against the
    /// sender's roles; `nil` for none (then the gateway binds loopback, ipc or inproc only).
    public var security: SecurityConfig?

    public init(servers: [String], commandEndpoint: String = WireProtocol.defaultCommandEndpoint,
                pipeline: [String] = [], replicas: Int? = nil, duplicateWindow: Duration = .seconds(600),
                requestTimeout: Duration = .seconds(5), publishTimeout: Duration = .seconds(2), ackWait: Duration = .seconds(5),
                maxEventBytes: Int = WireProtocol.defaultMaxEventBytes, maxEventsInFlight: Int = 4_000,
                connectionName: String = "eventbus-gateway", orderFence: Duration = .seconds(30)) {
        self.servers = servers
        self.commandEndpoint = commandEndpoint
        self.pipeline = pipeline
        self.replicas = replicas ?? (servers.count >= 3 ? 3 : 1)
        self.duplicateWindow = duplicateWindow
        self.requestTimeout = requestTimeout
        self.publishTimeout = publishTimeout
        self.ackWait = ackWait
        self.maxEventBytes = maxEventBytes
        self.maxEventsInFlight = maxEventsInFlight
        self.connectionName = connectionName
        self.orderFence = orderFence
    }

    /// The stages in order: `in`, the pipeline's, `out`, `diag`.
    public var stages: [String] { [Stage.in] + pipeline + [Stage.out, Stage.diag] }

    /// The `--backend` value itself, or for `@FILE` the first line of that file (as
    /// `eventbus cluster up` writes `DATA/users/USER.url`): a URL with a password on a
    /// command line shows in `ps` to every user of the machine; one in a file of mode 0600
    /// does not.
    ///
    /// - Throws: ``GatewayError/badBackend(_:_:)`` naming the file when it cannot be read or is empty.
    public static func backendValue(_ option: String) throws(GatewayError) -> String {
        guard option.hasPrefix("@") else { return option }
        let path = String(option.dropFirst())
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw .badBackend(option, "cannot read \(path): \((error as NSError).localizedDescription)")
        }
        guard let line = text.split(whereSeparator: \.isNewline).first?.trimmingCharacters(in: .whitespaces), !line.isEmpty else {
            throw .badBackend(option, "\(path) is empty: it holds the URLs, as DATA/users/USER.url does")
        }
        return line
    }

    /// The servers of a `--backend` value: `nats://h1:4222,h2:4222,h3:4222` or the same
    /// with `nats://` before each, each perhaps with `user:password@` before the host (the
    /// users of `eventbus cluster up`); a host without a port gets 4222.
    ///
    /// - Throws: ``GatewayError/badBackend(_:_:)`` for an empty list or another scheme.
    public static func servers(backend: String) throws(GatewayError) -> [String] {
        let scheme = "nats://"
        guard backend.hasPrefix(scheme) else { throw .badBackend(ServerURL.redacted(backend), "it must start with nats://") }
        let entries = backend.dropFirst(scheme.count).split(separator: ",", omittingEmptySubsequences: false)
        var servers: [String] = []
        for raw in entries {
            let entry = raw.hasPrefix(scheme) ? raw.dropFirst(scheme.count) : raw[...]
            guard !entry.isEmpty, !entry.contains("/"), !entry.contains("://") else {
                throw .badBackend(ServerURL.redacted(backend), "\"\(ServerURL.redacted(String(raw)))\" is not host:port")
            }
            let host = ServerURL.hostPart(entry)
            guard !host.isEmpty else { throw .badBackend(ServerURL.redacted(backend), "\"\(ServerURL.redacted(String(raw)))\" has no host") }
            let hasPort = host.split(separator: ":").count == 2 || (host.hasPrefix("[") && host.contains("]:"))
            servers.append(scheme + entry + (hasPort ? "" : ":4222"))
        }
        return servers
    }
}
