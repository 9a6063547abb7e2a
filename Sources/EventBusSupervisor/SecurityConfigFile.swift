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
        let known: Set<String> = ["secret_key_file", "clients", "http_tokens", "http_jwt_hs256_secret"]
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
        let config = SecurityConfig(secretKey: secretKey, clients: clients)
        do { try config.validate() } catch { throw PipelineError(.securityFile, "security file \(path): \(error)") }
        return config
    }
}
