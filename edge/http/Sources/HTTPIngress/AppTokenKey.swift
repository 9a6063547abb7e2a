import Crypto
import EventBusSupervisor

/// A public key of ES256 app tokens (ECDSA on P-256 with SHA-256, RFC 7518 section 3.4): one
/// entry of the security file's `http_jwt_es256_keys`, with its `kid`, if any.
public struct AppTokenKey: Sendable {
    /// The key id a token's `kid` header names to pick this key; nil for none.
    public let keyID: String?
    /// The key.
    let key: P256.Signing.PublicKey

    public init(keyID: String?, key: P256.Signing.PublicKey) {
        self.keyID = keyID
        self.key = key
    }

    /// The key of entry `index` of `http_jwt_es256_keys`, as the security file gave it.
    ///
    /// - Throws: ``AppTokenError`` naming the entry when its `x` and `y` are not a point of P-256.
    public init(_ entry: SecurityConfigFile.ES256Key, index: Int) throws(AppTokenError) {
        do {
            key = try P256.Signing.PublicKey(rawRepresentation: entry.x + entry.y)
        } catch {
            throw AppTokenError("http_jwt_es256_keys[\(index)]\(entry.keyID.map { " (kid \($0))" } ?? ""): x and y are not a point of P-256")
        }
        keyID = entry.keyID
    }
}
