import CZeroMQ

/// A CurveZMQ key pair (RFC 26), both keys as 40-character Z85 text.
///
/// ```swift
/// let pair = try CurveKeyPair.generate()
/// try server.makeCurveServer(secretKey: pair.secretKey)
/// ```
public struct CurveKeyPair: Sendable, Equatable {
    /// The public key, safe to share: the peer's identity.
    public let publicKey: String
    /// The secret key; whoever holds it is this peer.
    public let secretKey: String

    /// Creates a pair from keys already known to belong together.
    public init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Makes a new random key pair with libzmq (`zmq_curve_keypair`, libsodium inside).
    ///
    /// - Throws: `ENOTSUP` when libzmq was built without CURVE.
    public static func generate() throws(ZMQError) -> CurveKeyPair {
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        if zmq_curve_keypair(&publicKey, &secretKey) != 0 { throw ZMQError.last("zmq_curve_keypair") }
        return CurveKeyPair(publicKey: Self.text(publicKey), secretKey: Self.text(secretKey))
    }

    /// The key pair whose secret key is `secretKey` (`zmq_curve_public`).
    ///
    /// - Throws: `EINVAL` when `secretKey` is not a 40-character Z85 key.
    public init(secretKey: String) throws(ZMQError) {
        guard Self.isValidKey(secretKey) else { throw ZMQError(code: EINVAL, operation: "zmq_curve_public") }
        var publicKey = [CChar](repeating: 0, count: 41)
        if zmq_curve_public(&publicKey, secretKey) != 0 { throw ZMQError.last("zmq_curve_public") }
        self.init(publicKey: Self.text(publicKey), secretKey: secretKey)
    }

    /// Whether `key` is a 40-character Z85 encoding of a 32-byte key.
    public static func isValidKey(_ key: String) -> Bool {
        guard key.utf8.count == 40 else { return false }
        var bytes = [UInt8](repeating: 0, count: 32)
        return zmq_z85_decode(&bytes, key) != nil
    }

    /// The 32 bytes a Z85 key encodes (as ZAP passes CURVE credentials), or `nil` if `key` is not a Z85 key.
    public static func binaryKey(_ key: String) -> [UInt8]? {
        guard key.utf8.count == 40 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        return zmq_z85_decode(&bytes, key) == nil ? nil : bytes
    }

    /// Whether the linked libzmq supports CURVE (`zmq_has("curve")`).
    public static var isSupported: Bool { zmq_has("curve") != 0 }

    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
