#if canImport(Glibc)
import Glibc
#endif
import ZeroMQ

/// The CURVE keys a client connects with to a broker that has keys configured:
/// its own key pair and the broker's public key (docs/security.md).
///
/// Programs that run under `eventbus up`, and the CLI, read them from the
/// environment (``fromEnvironment()``): the secret key is never on a command line.
public struct CurveClientKeys: Sendable, Equatable {
    /// This client's key pair; the broker maps its public key to a role.
    public var keys: CurveKeyPair
    /// The broker's public key, Z85: the client refuses any other server.
    public var serverKey: String

    /// The client's secret key, Z85.
    public static let secretKeyVariable = "EVENTBUS_SECRET_KEY"
    /// A file holding the client's secret key (mode 0600), used when ``secretKeyVariable`` is unset.
    public static let secretKeyFileVariable = "EVENTBUS_SECRET_KEY_FILE"
    /// The broker's public key, Z85.
    public static let serverKeyVariable = "EVENTBUS_SERVER_KEY"
    /// A file holding the broker's public key, used when ``serverKeyVariable`` is unset.
    public static let serverKeyFileVariable = "EVENTBUS_SERVER_KEY_FILE"

    /// Creates keys; the client's public key is derived from its secret key.
    ///
    /// - Throws: `EINVAL` when a key is not 40 characters of Z85.
    public init(secretKey: String, serverKey: String) throws(ZMQError) {
        keys = try CurveKeyPair(secretKey: secretKey)
        guard CurveKeyPair.isValidKey(serverKey) else { throw ZMQError(code: EINVAL, operation: "server key (40 Z85 characters)") }
        self.serverKey = serverKey
    }

    /// Reads secret key and server key from files (as written by `eventbus keygen`).
    public init(secretKeyFile: String, serverKeyFile: String) throws(CurveClientKeysError) {
        do {
            try self.init(secretKey: try CurveKeyFile.read(secretKeyFile, secret: true),
                          serverKey: try CurveKeyFile.read(serverKeyFile, secret: false))
        } catch {
            throw CurveClientKeysError(code: .invalid, description: "\(error)")
        }
    }

    /// The keys named by the environment (``secretKeyVariable`` or ``secretKeyFileVariable``,
    /// and ``serverKeyVariable`` or ``serverKeyFileVariable``), or `nil` when none is set.
    ///
    /// - Throws: When only one of the two keys is given, or a key or file is invalid.
    public static func fromEnvironment() throws(CurveClientKeysError) -> CurveClientKeys? {
        func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } }
        let secret: String?, server: String?
        do {
            secret = try variable(secretKeyVariable) ?? variable(secretKeyFileVariable).map { path throws(CurveKeyFileError) in
                try CurveKeyFile.read(path, secret: true)
            }
            server = try variable(serverKeyVariable) ?? variable(serverKeyFileVariable).map { path throws(CurveKeyFileError) in
                try CurveKeyFile.read(path, secret: false)
            }
        } catch {
            throw CurveClientKeysError(code: .invalid, description: "\(error)")
        }
        switch (secret, server) {
        case (nil, nil): return nil
        case (let secret?, let server?):
            do { return try CurveClientKeys(secretKey: secret, serverKey: server) } catch {
                throw CurveClientKeysError(code: .invalid, description: "\(secretKeyVariable)/\(serverKeyVariable): \(error)")
            }
        default:
            throw CurveClientKeysError(code: .incomplete, description: "CURVE needs both the client secret key (\(secretKeyVariable) or "
                + "\(secretKeyFileVariable)) and the broker public key (\(serverKeyVariable) or \(serverKeyFileVariable))")
        }
    }

    /// The environment variables that hand these keys to a child process.
    public var environment: [String: String] {
        [Self.secretKeyVariable: keys.secretKey, Self.serverKeyVariable: serverKey]
    }

    /// Makes `socket` a CURVE client with these keys; call before `connect`.
    public func apply(to socket: Socket) throws(ZMQError) {
        try socket.makeCurveClient(keys: keys, serverKey: serverKey)
    }
}

/// CURVE keys for a client that cannot be used.
public struct CurveClientKeysError: Error, Sendable, CustomStringConvertible {
    /// What is wrong with the keys.
    public enum Code: String, Sendable, Equatable {
        /// A key file or variable holds no valid key.
        case invalid
        /// Only one of the two keys CURVE needs is given.
        case incomplete
    }

    public let code: Code
    public let description: String
}
