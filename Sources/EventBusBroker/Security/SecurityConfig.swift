import ZeroMQ

/// The broker's CURVE identity and the clients it admits, each with a role.
///
/// When a ``BrokerConfig`` has one, both sockets are CURVE servers, the broker
/// answers ZAP itself and every command is checked against the sender's role.
public struct SecurityConfig: Sendable, Equatable {
    /// One admitted client: its public key and what it may do.
    public struct Client: Sendable, Equatable {
        /// The name the broker knows it by (the ZAP user id, in logs).
        public var name: String
        /// Its CURVE public key, Z85.
        public var publicKey: String
        /// What it may do: the union of these roles' permissions.
        public var roles: [Role]

        /// Creates a client entry.
        public init(name: String, publicKey: String, roles: [Role]) {
            self.name = name
            self.publicKey = publicKey
            self.roles = roles
        }
    }

    /// The broker's own secret key, Z85.
    public var secretKey: String
    /// The clients admitted; any other key is refused at the handshake.
    public var clients: [Client]

    /// Creates a configuration; ``validate()`` checks it.
    public init(secretKey: String, clients: [Client]) {
        self.secretKey = secretKey
        self.clients = clients
    }

    /// The broker's public key, derived from ``secretKey``.
    public var publicKey: String {
        get throws(ZMQError) { try CurveKeyPair(secretKey: secretKey).publicKey }
    }

    /// Checks the keys and that names and public keys are unique.
    public func validate() throws(SecurityConfigError) {
        guard CurveKeyPair.isValidKey(secretKey) else {
            throw SecurityConfigError(.invalidKey, "the broker secret key is not a 40-character Z85 key")
        }
        var names = Set<String>(), keys = Set<String>()
        for client in clients {
            guard !client.name.isEmpty, client.name.utf8.count <= 64 else {
                throw SecurityConfigError(.invalidName, "client names must have 1 to 64 bytes")
            }
            guard CurveKeyPair.isValidKey(client.publicKey) else {
                throw SecurityConfigError(.invalidKey, "client \(client.name): public_key is not a 40-character Z85 key")
            }
            guard !client.roles.isEmpty else { throw SecurityConfigError(.noRole, "client \(client.name) has no role") }
            guard names.insert(client.name).inserted else { throw SecurityConfigError(.duplicate, "client \(client.name) is listed twice") }
            guard keys.insert(client.publicKey).inserted else {
                throw SecurityConfigError(.duplicate, "client \(client.name): its public key is already listed under another name")
            }
        }
    }
}

/// A security configuration that cannot be used.
public struct SecurityConfigError: Error, Sendable, CustomStringConvertible {
    /// What is wrong with the configuration.
    public enum Code: String, Sendable, Equatable {
        /// A key is not a 40-character Z85 key.
        case invalidKey = "invalid_key"
        /// A client's name is empty or longer than 64 bytes.
        case invalidName = "invalid_name"
        /// A client has no role.
        case noRole = "no_role"
        /// A name or a public key is listed twice.
        case duplicate
    }

    public let code: Code
    public let description: String
    /// Creates an error with its code and a sentence saying what is wrong.
    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
