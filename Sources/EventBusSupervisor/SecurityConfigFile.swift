import EventBusBroker
import Foundation
import Yams
import ZeroMQ

/// Reads a broker's security file (`--security FILE`, or `security:` in the `up` config):
///
/// ```yaml
/// secret_key_file: broker.secret     # the broker's key (eventbus keygen), mode 0600
/// clients:
///   - name: chat-backend
///     public_key_file: backend.pub   # or public_key: "<40 Z85 characters>"
///     role: backend                  # backend | plugin:NAME | subscriber | admin
///   - name: dashboard
///     public_key: "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
///     roles: [subscriber]
/// http_tokens:                       # optional: bearer tokens of eventbus-http (docs/http.md)
///   "2c4f0e1d9a8b7c6d5e4f3a2b": backend
/// http_jwt_hs256_secret: "…"          # optional: signs the per-user app tokens of eventbus-http's stream
/// http_jwt_es256_keys:               # optional: public keys (JWK, EC P-256) of ES256 app tokens
///   - {"kty": "EC", "crv": "P-256", "kid": "app-1", "x": "…", "y": "…"}
/// ```
///
/// Relative paths are relative to the file's own folder.
public enum SecurityConfigFile {
    /// The `http_tokens` of the security file at `path` (``HTTPTokens/none`` when it has none),
    /// after checking the whole file as ``load(path:)`` does.
    public static func httpTokens(path: String) throws(PipelineError) -> HTTPTokens {
        _ = try load(path: path)
        let node: Any?
        do { node = try Yams.load(yaml: try String(contentsOfFile: path, encoding: .utf8)) } catch {
            throw PipelineError(.securityFile, "cannot read security file \(path): \(error)")
        }
        do { return try HTTPTokens.parse((node as? [String: Any])?["http_tokens"]) } catch {
            throw PipelineError(.securityFile, "security file \(path): \(error)")
        }
    }

    /// The `http_jwt_hs256_secret` of the security file at `path`, the key of the per-user app
    /// tokens of eventbus-http's stream (docs/http.md); nil when it has none. Checks the whole
    /// file as ``load(path:)`` does.
    public static func httpJWTSecret(path: String) throws(PipelineError) -> String? {
        _ = try load(path: path)
        let node: Any?
        do { node = try Yams.load(yaml: try String(contentsOfFile: path, encoding: .utf8)) } catch {
            throw PipelineError(.securityFile, "cannot read security file \(path): \(error)")
        }
        return try jwtSecret((node as? [String: Any])?["http_jwt_hs256_secret"], path: path)
    }

    /// An EC P-256 public key of `http_jwt_es256_keys`, which verifies the ES256 app tokens of
    /// eventbus-http's stream (docs/http.md): a JWK (RFC 7517, 7518 section 6.2) with `kty`
    /// `EC`, `crv` `P-256`, the coordinates `x` and `y` (base64url of 32 bytes each), and
    /// optionally `kid`, `alg` (`ES256`) and `use` (`sig`). Only the shape is checked here;
    /// eventbus-http checks that the point is on the curve when it starts.
    public struct ES256Key: Sendable, Equatable {
        /// The key id (`kid`) that a token's header names to pick this key; nil for none.
        public let keyID: String?
        /// The coordinates, 32 bytes each, big-endian.
        public let x: [UInt8]
        public let y: [UInt8]

        public init(keyID: String?, x: [UInt8], y: [UInt8]) {
            self.keyID = keyID
            self.x = x
            self.y = y
        }

        /// The members a JWK may have here; `d` (a private key) is refused on its own.
        static let members: Set<String> = ["kty", "crv", "x", "y", "kid", "alg", "use"]

        /// Parses `node`, the entry `field` of the file at `path`.
        static func parse(_ node: Any, field: String, path: String) throws(PipelineError) -> ES256Key {
            func refuse(_ what: String) -> PipelineError { PipelineError(.securityFile, "security file \(path): \(field): \(what)") }
            guard let jwk = node as? [String: Any] else {
                throw refuse("must be a JWK, a mapping such as {\"kty\": \"EC\", \"crv\": \"P-256\", \"x\": \"…\", \"y\": \"…\"}")
            }
            if jwk["d"] != nil { throw refuse("has d, a private key: give the public key only (x and y)") }
            if let unknown = jwk.keys.sorted().first(where: { !members.contains($0) }) {
                throw refuse("has an unknown member \"\(unknown)\" (known: \(members.sorted().joined(separator: ", ")))")
            }
            guard jwk["kty"] as? String == "EC", jwk["crv"] as? String == "P-256" else {
                throw refuse("must have kty EC and crv P-256 (an ES256 key)")
            }
            if let alg = jwk["alg"], alg as? String != "ES256" { throw refuse("alg must be ES256") }
            if let use = jwk["use"], use as? String != "sig" { throw refuse("use must be sig") }
            var keyID: String?
            if let kid = jwk["kid"] {
                guard let kid = kid as? String, !kid.isEmpty else { throw refuse("kid must be a non-empty string") }
                keyID = kid
            }
            func coordinate(_ name: String) throws(PipelineError) -> [UInt8] {
                guard let text = jwk[name] as? String, let bytes = base64URL(text), bytes.count == 32 else {
                    throw refuse("\(name) must be the base64url of 32 bytes (a P-256 coordinate)")
                }
                return bytes
            }
            return ES256Key(keyID: keyID, x: try coordinate("x"), y: try coordinate("y"))
        }

        /// Unpadded base64url (RFC 7515, section 2); nil for anything else.
        static func base64URL(_ text: String) -> [UInt8]? {
            guard text.utf8.allSatisfy({ $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
            else { return nil }
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            return Data(base64Encoded: base64).map { Array($0) }
        }
    }

    /// The `http_jwt_es256_keys` of the security file at `path` (empty when it has none).
    /// Checks the whole file as ``load(path:)`` does.
    public static func httpJWTES256Keys(path: String) throws(PipelineError) -> [ES256Key] {
        _ = try load(path: path)
        let node: Any?
        do { node = try Yams.load(yaml: try String(contentsOfFile: path, encoding: .utf8)) } catch {
            throw PipelineError(.securityFile, "cannot read security file \(path): \(error)")
        }
        return try es256Keys((node as? [String: Any])?["http_jwt_es256_keys"], path: path)
    }

    private static func es256Keys(_ node: Any?, path: String) throws(PipelineError) -> [ES256Key] {
        guard let node else { return [] }
        guard let entries = node as? [Any], !entries.isEmpty else {
            throw PipelineError(.securityFile, "security file \(path): http_jwt_es256_keys must be a non-empty list of JWKs")
        }
        var keys: [ES256Key] = []
        for (index, entry) in entries.enumerated() {
            let key = try ES256Key.parse(entry, field: "http_jwt_es256_keys[\(index)]", path: path)
            if entries.count > 1, key.keyID == nil {
                throw PipelineError(.securityFile, "security file \(path): http_jwt_es256_keys[\(index)]: kid is required when there are several keys")
            }
            if let kid = key.keyID, keys.contains(where: { $0.keyID == kid }) {
                throw PipelineError(.securityFile, "security file \(path): http_jwt_es256_keys[\(index)]: kid \(kid) is given twice")
            }
            keys.append(key)
        }
        return keys
    }

    /// The shortest `http_jwt_hs256_secret`: 32 bytes, SHA-256's output size (RFC 7518, 3.2).
    public static let minimumJWTSecretBytes = 32

    private static func jwtSecret(_ node: Any?, path: String) throws(PipelineError) -> String? {
        guard let node else { return nil }
        guard let secret = node as? String, secret.utf8.count >= minimumJWTSecretBytes else {
            throw PipelineError(.securityFile, "security file \(path): http_jwt_hs256_secret must be a string of at least "
                + "\(minimumJWTSecretBytes) bytes (openssl rand -base64 48)")
        }
        return secret
    }

    /// Loads and validates the security file at `path`.
    public static func load(path: String) throws(PipelineError) -> SecurityConfig {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw PipelineError(.securityFile, "cannot read security file \(path): \(error.localizedDescription)")
        }
        let node: Any?
        do { node = try Yams.load(yaml: text) } catch {
            throw PipelineError(.securityFile, "security file \(path) is not valid YAML: \(error)")
        }
        guard let root = node as? [String: Any] else {
            throw PipelineError(.securityFile, "security file \(path): the top level must be a mapping")
        }
        let known: Set<String> = ["secret_key_file", "clients", "http_tokens", "http_jwt_hs256_secret", "http_jwt_es256_keys"]
        if let unknown = root.keys.first(where: { !known.contains($0) }) {
            throw PipelineError(.securityFile, "security file \(path): unknown key \"\(unknown)\" (known: \(known.sorted().joined(separator: ", ")))")
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        func resolve(_ file: String) -> String {
            file.hasPrefix("/") ? file : folder.appendingPathComponent(file).path
        }
        guard let secretFile = root["secret_key_file"] as? String else {
            throw PipelineError(.securityFile, "security file \(path): secret_key_file (the broker's secret key file) is required")
        }
        let secretKey: String
        do { secretKey = try CurveKeyFile.read(resolve(secretFile), secret: true) } catch {
            throw PipelineError(.securityFile, "security file \(path): \(error)")
        }
        var clients: [SecurityConfig.Client] = []
        for (index, entry) in ((root["clients"] as? [Any]) ?? []).enumerated() {
            let field = "clients[\(index)]"
            guard let map = entry as? [String: Any], let name = map["name"] as? String else {
                throw PipelineError(.securityFile, "security file \(path): \(field) must be a mapping with a name")
            }
            let allowed: Set<String> = ["name", "public_key", "public_key_file", "role", "roles"]
            if let unknown = map.keys.first(where: { !allowed.contains($0) }) {
                throw PipelineError(.securityFile, "security file \(path): \(field) has an unknown key \"\(unknown)\"")
            }
            let publicKey: String
            if let key = map["public_key"] as? String {
                publicKey = key
            } else if let file = map["public_key_file"] as? String {
                do { publicKey = try CurveKeyFile.read(resolve(file), secret: false) } catch {
                    throw PipelineError(.securityFile, "security file \(path): \(field): \(error)")
                }
            } else {
                throw PipelineError(.securityFile, "security file \(path): \(field) needs public_key or public_key_file")
            }
            let roleNames: [String]
            if let role = map["role"] as? String {
                roleNames = [role]
            } else if let roles = map["roles"] as? [String] {
                roleNames = roles
            } else {
                throw PipelineError(.securityFile, "security file \(path): \(field) needs role (or roles)")
            }
            var roles: [Role] = []
            for roleName in roleNames {
                guard let role = Role(roleName) else {
                    throw PipelineError(.securityFile, "security file \(path): \(field): unknown role \"\(roleName)\" "
                        + "(backend, plugin:NAME, subscriber, admin)")
                }
                roles.append(role)
            }
            clients.append(SecurityConfig.Client(name: name, publicKey: publicKey, roles: roles))
        }
        // Read by eventbus-http (``httpTokens(path:)``); checked here so that the broker refuses a broken entry too.
        do { _ = try HTTPTokens.parse(root["http_tokens"]) } catch { throw PipelineError(.securityFile, "security file \(path): \(error)") }
        _ = try jwtSecret(root["http_jwt_hs256_secret"], path: path)
        _ = try es256Keys(root["http_jwt_es256_keys"], path: path)
        let config = SecurityConfig(secretKey: secretKey, clients: clients)
        do { try config.validate() } catch { throw PipelineError(.securityFile, "security file \(path): \(error)") }
        return config
    }
}
