import Crypto
import EventBus
import Foundation

/// Per-user app tokens: JSON Web Tokens (RFC 7519) that the app's backend issues to each
/// signed-in user, signed with HMAC-SHA256 (`HS256`, RFC 7518) under the security file's
/// `http_jwt_hs256_secret`, or with ECDSA P-256 (`ES256`) under a private key whose public
/// key is one of its `http_jwt_es256_keys`. The `sub` claim is the user id and `exp` is
/// required; `nbf` is honoured. Only the algorithms configured are accepted: `none`, any other
/// `alg`, and an HS256 token on a server with ES256 keys only (the key confusion of RFC 8725,
/// section 2.1) are refused, and so is a `crit` header.
public struct AppTokenVerifier: Sendable {
    private let key: SymmetricKey?
    private let es256Keys: [AppTokenKey]
    /// The clock skew allowed on `exp` and `nbf`.
    public let leeway: TimeInterval

    /// The shortest secret: 32 bytes, the output size of SHA-256 (RFC 7518, section 3.2).
    public static let minimumSecretBytes = 32

    /// HS256 tokens under `secret` only.
    ///
    /// - Throws: ``AppTokenError`` for a secret shorter than ``minimumSecretBytes``.
    public init(secret: String, leeway: TimeInterval = 60) throws(AppTokenError) {
        try self.init(hs256Secret: secret, es256Keys: [], leeway: leeway)
    }

    /// HS256 tokens under `hs256Secret` (nil: none) and ES256 tokens under `es256Keys`.
    ///
    /// - Throws: ``AppTokenError`` for a secret shorter than ``minimumSecretBytes``, for no key
    ///   at all, and for two keys with the same `kid` or several keys where one has none.
    public init(hs256Secret: String?, es256Keys: [AppTokenKey], leeway: TimeInterval = 60) throws(AppTokenError) {
        if let secret = hs256Secret, secret.utf8.count < Self.minimumSecretBytes {
            throw AppTokenError("http_jwt_hs256_secret must be at least \(Self.minimumSecretBytes) bytes (openssl rand -base64 48)")
        }
        guard hs256Secret != nil || !es256Keys.isEmpty else { throw AppTokenError("no key for app tokens: give an HS256 secret or ES256 keys") }
        if es256Keys.count > 1 {
            let ids = es256Keys.compactMap(\.keyID)
            guard ids.count == es256Keys.count, Set(ids).count == ids.count else {
                throw AppTokenError("several ES256 keys need a kid each, all different")
            }
        }
        key = hs256Secret.map { SymmetricKey(data: Array($0.utf8)) }
        self.es256Keys = es256Keys
        self.leeway = leeway
    }

    /// The algorithms accepted, as a token's `alg` names them.
    public var algorithms: [String] { (key == nil ? [] : ["HS256"]) + (es256Keys.isEmpty ? [] : ["ES256"]) }

    /// Checks `token`'s form, algorithm, signature, `exp`, `nbf` and `sub`.
    ///
    /// - Throws: ``AppTokenError`` naming what is wrong.
    public func verify(_ token: String, now: Date = Date()) throws(AppTokenError) -> AppToken {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw AppTokenError("not a JWT: expected header.payload.signature") }
        let header = try Self.object(parts[0], "header")
        let algorithm = header["alg"]?.stringValue
        guard let algorithm, algorithms.contains(algorithm) else {
            throw AppTokenError("the JWT's alg is \(algorithm ?? "missing"): only \(algorithms.joined(separator: " and ")) accepted here")
        }
        if let type = header["typ"], type.stringValue?.uppercased() != "JWT" { throw AppTokenError("the JWT's typ is not JWT") }
        guard header["crit"] == nil else { throw AppTokenError("the JWT has a crit header this server does not implement") }
        guard let signature = Self.base64URL(parts[2]) else { throw AppTokenError("the JWT's signature is not base64url") }
        let signed = Array("\(parts[0]).\(parts[1])".utf8)
        if algorithm == "ES256" {
            let publicKey = try es256Key(header["kid"])
            guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
                  publicKey.key.isValidSignature(ecdsa, for: signed) else {
                throw AppTokenError("the JWT's signature does not match the ES256 key\(publicKey.keyID.map { " \($0)" } ?? "")")
            }
        } else {
            guard let key, HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signed, using: key) else {
                throw AppTokenError("the JWT's signature does not match http_jwt_hs256_secret")
            }
        }
        let claims = try Self.object(parts[1], "payload")
        guard let exp = claims["exp"]?.doubleValue else { throw AppTokenError("the JWT has no exp (a NumericDate) claim") }
        guard now.timeIntervalSince1970 < exp + leeway else { throw AppTokenError("the JWT expired") }
        if let nbf = claims["nbf"] {
            guard let notBefore = nbf.doubleValue else { throw AppTokenError("the JWT's nbf is not a NumericDate") }
            guard now.timeIntervalSince1970 + leeway >= notBefore else { throw AppTokenError("the JWT is not valid yet (nbf)") }
        }
        guard let user = claims["sub"]?.stringValue, Identifier.isValidUserID(user) else {
            throw AppTokenError("the JWT's sub must be a user id ([A-Za-z0-9_!.@-]{1,128}, not starting with @)")
        }
        return AppToken(user: user, expires: Date(timeIntervalSince1970: exp))
    }

    /// The ES256 key for a token whose header's `kid` is `kid`: the key of that id; without
    /// one, the only key. A key without an id (then the only one) takes any `kid`.
    private func es256Key(_ kid: JSONValue?) throws(AppTokenError) -> AppTokenKey {
        guard let kid else {
            guard es256Keys.count == 1 else { throw AppTokenError("the JWT has no kid: it must name one of the \(es256Keys.count) ES256 keys") }
            return es256Keys[0]
        }
        guard let id = kid.stringValue else { throw AppTokenError("the JWT's kid is not a string") }
        if let key = es256Keys.first(where: { $0.keyID == id }) { return key }
        if es256Keys.count == 1, es256Keys[0].keyID == nil { return es256Keys[0] }
        throw AppTokenError("the JWT's kid \(id) is not one of http_jwt_es256_keys")
    }

    /// A token for `user` until `expires`, as a backend issues one (with any JWT library).
    public func sign(user: String, expires: Date) -> String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("sub")
        writer.string(user)
        writer.key("exp")
        writer.int(Int(expires.timeIntervalSince1970.rounded(.down)))
        writer.endObject()
        return sign(claims: writer.bytes)
    }

    /// A token of the claims `claims` (a JSON object), signed HS256: for a verifier made with
    /// an HS256 secret only.
    public func sign(claims: [UInt8]) -> String {
        guard let key else { preconditionFailure("sign(claims:) needs the HS256 secret") }
        let input = Self.base64URL(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "." + Self.base64URL(claims)
        let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: key)
        return input + "." + Self.base64URL(Array(mac))
    }

    private static func object(_ part: Substring, _ what: String) throws(AppTokenError) -> JSONValue {
        guard let bytes = base64URL(part), let value = try? JSONParser.parse(bytes), case .object = value else {
            throw AppTokenError("the JWT's \(what) is not a base64url JSON object")
        }
        return value
    }

    /// Decodes unpadded base64url (RFC 7515, section 2); nil for anything else.
    static func base64URL(_ text: Substring) -> [UInt8]? {
        guard text.utf8.allSatisfy({ $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
        else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map { Array($0) }
    }

    /// Encodes as unpadded base64url.
    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
