import Crypto
import Foundation

/// Issues the per-user app tokens that `eventbus-http`'s `GET /v1/stream` takes (docs/http.md,
/// "App tokens"): JWTs signed HS256 with the security file's `http_jwt_hs256_secret`, the user
/// in `sub`. This is what an app's own server does once a user has signed in; the demo signs
/// in nobody and issues a token for any user it is asked for.
public struct AppTokenIssuer: Sendable {
    private let key: SymmetricKey
    /// How long a token lasts.
    public let lifetime: TimeInterval

    public init(secret: String, lifetime: TimeInterval = 3_600) {
        key = SymmetricKey(data: Array(secret.utf8))
        self.lifetime = lifetime
    }

    /// A token for `user`, valid from `now` for ``lifetime`` seconds.
    public func token(for user: String, now: Date = Date()) -> (token: String, expires: Int) {
        let expires = Int((now.timeIntervalSince1970 + lifetime).rounded(.down))
        let claims = #"{"sub":"# + Self.jsonString(user) + #","exp":\#(expires)}"#
        let input = Self.base64URL(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "." + Self.base64URL(Array(claims.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: key)
        return (input + "." + Self.base64URL(Array(mac)), expires)
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// `text` as a JSON string literal.
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
