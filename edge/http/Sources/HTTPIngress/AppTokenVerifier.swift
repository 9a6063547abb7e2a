import Crypto
import EventBus
import Foundation

/// Per-user app tokens: JSON Web Tokens (RFC 7519) signed with HMAC-SHA256 (`HS256`, RFC
/// 7518) under the security file's `http_jwt_hs256_secret`, that the app's backend issues
/// to each signed-in user. The `sub` claim is the user id and `exp` is required; `nbf` is
/// honoured. Any other `alg` (`none` above all) is refused, and so is a `crit` header.
public struct AppTokenVerifier: Sendable {
    private let key: SymmetricKey
    /// The clock skew allowed on `exp` and `nbf`.
    public let leeway: TimeInterval

    /// The shortest secret: 32 bytes, the output size of SHA-256 (RFC 7518, section 3.2).
    public static let minimumSecretBytes = 32

    /// - Throws: ``AppTokenError`` for a secret shorter than ``minimumSecretBytes``.
    public init(secret: String, leeway: TimeInterval = 60) throws(AppTokenError) {
        guard secret.utf8.count >= Self.minimumSecretBytes else {
            throw AppTokenError("http_jwt_hs256_secret must be at least \(Self.minimumSecretBytes) bytes (openssl rand -base64 48)")
        }
        key = SymmetricKey(data: Array(secret.utf8))
        self.leeway = leeway
    }

    /// Checks `token`'s form, algorithm, signature, `exp`, `nbf` and `sub`.
    ///
    /// - Throws: ``AppTokenError`` naming what is wrong.
    public func verify(_ token: String, now: Date = Date()) throws(AppTokenError) -> AppToken {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw AppTokenError("not a JWT: expected header.payload.signature") }
        let header = try Self.object(parts[0], "header")
        guard header["alg"]?.stringValue == "HS256" else {
            throw AppTokenError("the JWT's alg is \(header["alg"]?.stringValue ?? "missing"): only HS256 is accepted")
        }
        if let type = header["typ"], type.stringValue?.uppercased() != "JWT" { throw AppTokenError("the JWT's typ is not JWT") }
        guard header["crit"] == nil else { throw AppTokenError("the JWT has a crit header this server does not implement") }
        guard let signature = Self.base64URL(parts[2]) else { throw AppTokenError("the JWT's signature is not base64url") }
        let signed = Array("\(parts[0]).\(parts[1])".utf8)
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signed, using: key) else {
            throw AppTokenError("the JWT's signature does not match http_jwt_hs256_secret")
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

    /// A token of the claims `claims` (a JSON object), signed HS256.
    public func sign(claims: [UInt8]) -> String {
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
