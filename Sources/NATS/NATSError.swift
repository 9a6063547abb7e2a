import CNATS

/// An error reported by libnats or by the JetStream server, with the operation that failed.
///
/// libnats returns a `natsStatus` from every call and keeps a longer sentence (the
/// server's own text for a JetStream error, the addresses it tried for a failed
/// connection) per thread; this type captures both at the point of failure, together
/// with the JetStream error code when the call reports one.
public struct NATSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `natsStatus` value libnats returned (`NATS_TIMEOUT`, `NATS_NO_SERVER`, …).
    public let status: UInt32
    /// The JetStream API error code (`JSStreamWrongLastSequenceErr` is 10071), or 0 when
    /// the call gave none: the KV calls of libnats 3.4 never do, see ``isWrongLastSequence``.
    public let jetStreamCode: Int
    /// The call and what it was applied to, such as `connect nats://127.0.0.1:4222`.
    public let operation: String
    /// libnats's sentence for the failure: the thread's last error text, else the status's text.
    public let text: String

    /// Creates an error from its parts.
    public init(status: UInt32, jetStreamCode: Int = 0, operation: String, text: String) {
        self.status = status
        self.jetStreamCode = jetStreamCode
        self.operation = operation
        self.text = text
    }

    /// Captures `status` and the calling thread's last libnats error text for `operation`.
    ///
    /// Must be called on the thread that made the failing call, right after it: libnats
    /// keeps the text in thread-local storage.
    static func last(_ status: natsStatus, _ operation: String, jetStreamCode: jsErrCode = jsErrCode(0)) -> NATSError {
        var lastStatus = NATS_OK
        var text = ""
        if let detail = nats_GetLastError(&lastStatus), lastStatus == status { text = String(cString: detail) }
        if text.isEmpty, let sentence = natsStatus_GetText(status) { text = String(cString: sentence) }
        return NATSError(status: status.rawValue, jetStreamCode: Int(jetStreamCode.rawValue), operation: operation, text: text)
    }

    /// Throws ``last(_:_:jetStreamCode:)`` unless `status` is `NATS_OK`.
    static func check(_ status: natsStatus, _ operation: @autoclosure () -> String,
                      jetStreamCode: jsErrCode = jsErrCode(0)) throws(NATSError) {
        if status != NATS_OK { throw last(status, operation(), jetStreamCode: jetStreamCode) }
    }

    /// `true` when the call timed out (`NATS_TIMEOUT`), for a fetch that found nothing too.
    public var isTimeout: Bool { status == NATS_TIMEOUT.rawValue }

    /// The TLS handshake failed, or one side wants TLS and the other does not.
    public var isTLS: Bool {
        [NATS_SSL_ERROR, NATS_SECURE_CONNECTION_WANTED, NATS_SECURE_CONNECTION_REQUIRED].contains { status == $0.rawValue }
    }

    /// `true` when what the call looked for is not there (`NATS_NOT_FOUND`), or the server
    /// said so with a JetStream "not found" code (stream 10059, consumer 10014).
    public var isNotFound: Bool {
        status == NATS_NOT_FOUND.rawValue
            || jetStreamCode == Int(JSStreamNotFoundErr.rawValue) || jetStreamCode == Int(JSConsumerNotFoundErr.rawValue)
    }
    /// `true` when a stream of that name exists with another configuration
    /// (`JSStreamNameExistErr`, 10058): made meanwhile by someone else.
    public var isStreamNameInUse: Bool { jetStreamCode == Int(JSStreamNameExistErr.rawValue) }
    /// `true` when no server of the list could be reached (`NATS_NO_SERVER`).
    public var isNoServer: Bool { status == NATS_NO_SERVER.rawValue }
    /// `true` when nobody listens on the subject (`NATS_NO_RESPONDERS`): for JetStream, no
    /// stream (or no leader yet) takes it, and nothing was stored.
    public var isNoResponders: Bool { status == NATS_NO_RESPONDERS.rawValue }
    /// `true` when the cluster has too few peers online to place a stream's replicas
    /// (`JSClusterNoPeersErr`, 10005): right after the servers start, before each has
    /// told the meta leader it is up, or while one is down.
    public var isNoPeers: Bool { jetStreamCode == Int(JSClusterNoPeersErr.rawValue) }
    /// `true` when the server answered "JetStream system temporarily unavailable"
    /// (`JSClusterNotAvailErr`, 10008): a request about a stream or consumer whose leader
    /// is being elected, after a leader was lost (seen on a consumer's info right after a
    /// SIGKILL of the stream's leader).
    public var isTemporarilyUnavailable: Bool { jetStreamCode == Int(JSClusterNotAvailErr.rawValue) }
    /// `true` when the connection is closed (`NATS_CONNECTION_CLOSED`).
    public var isConnectionClosed: Bool { status == NATS_CONNECTION_CLOSED.rawValue }
    /// `true` when an expected revision or last sequence was stale: the server's
    /// `JSStreamWrongLastSequenceErr` (10071). libnats 3.4's KV update drops that code and
    /// keeps only the server's text ("wrong last sequence: 7"), so the text is checked too.
    public var isWrongLastSequence: Bool {
        jetStreamCode == Int(JSStreamWrongLastSequenceErr.rawValue) || text.contains("wrong last sequence")
    }

    public var description: String {
        let code = jetStreamCode == 0 ? "" : ", JetStream error \(jetStreamCode)"
        return "\(operation): \(text) (status \(status)\(code))"
    }
}
