import Crypto
import Foundation
import HTTPIngress

/// An app's backend that signs ES256 app tokens (RFC 7518, section 3.4) with a P-256 key of
/// its own, and the public key as the JWK the security file's `http_jwt_es256_keys` lists.
struct ES256Signer: Sendable {
    let privateKey = P256.Signing.PrivateKey()
    let keyID: String?

    init(keyID: String? = nil) {
        self.keyID = keyID
    }

    /// The public key as the server knows it.
    var key: AppTokenKey { AppTokenKey(keyID: keyID, key: privateKey.publicKey) }

    /// The public key as a one-line JWK, for the security file.
    var jwk: String {
        let raw = Array(privateKey.publicKey.rawRepresentation)
        let kid = keyID.map { #", "kid": "\#($0)""# } ?? ""
        return #"{"kty": "EC", "crv": "P-256"\#(kid), "x": "\#(Self.part(raw.prefix(32)))", "y": "\#(Self.part(raw.suffix(32)))"}"#
    }

    static func part(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A token of `claims` under `header` (both JSON objects): the signature is ES256's r‖s.
    func sign(header: String, claims: String) throws -> String {
        let input = Self.part(Array(header.utf8)) + "." + Self.part(Array(claims.utf8))
        let signature = try privateKey.signature(for: Array(input.utf8))
        return input + "." + Self.part(signature.rawRepresentation)
    }

    /// A token for `user` until `expires`, with this key's `kid` (if any) in its header.
    func sign(user: String, expires: Date) throws -> String {
        let kid = keyID.map { #","kid":"\#($0)""# } ?? ""
        return try sign(header: #"{"alg":"ES256","typ":"JWT"\#(kid)}"#, claims: #"{"sub":"\#(user)","exp":\#(Int(expires.timeIntervalSince1970))}"#)
    }
}
