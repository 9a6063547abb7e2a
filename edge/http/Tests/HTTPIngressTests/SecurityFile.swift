import EventBusTesting
import Foundation
import Testing

/// A security file for the tests that run the bus with keys: a fresh broker key beside it,
/// no client, and the HTTP tokens, app-token secret and ES256 public keys (JWKs) given.
enum SecurityFile {
    /// Writes `security.yaml` and the broker's key into `directory`; the file's path.
    static func write(in directory: URL, tokens: [String: String], jwtSecret: String? = nil, es256Keys: [String] = []) async throws -> URL {
        let keygen = try await RunningProcess.run(BuildFolder.eventbus, ["keygen", "--out", directory.appendingPathComponent("broker").path])
        try #require(keygen.status == 0, "\(keygen.standardError)")
        var yaml = "secret_key_file: broker.secret\nclients: []\nhttp_tokens:\n"
        for (token, role) in tokens.sorted(by: { $0.key < $1.key }) { yaml += "  \"\(token)\": \(role)\n" }
        if let jwtSecret { yaml += "http_jwt_hs256_secret: \"\(jwtSecret)\"\n" }
        if !es256Keys.isEmpty { yaml += "http_jwt_es256_keys:\n" + es256Keys.map { "  - \($0)\n" }.joined() }
        let file = directory.appendingPathComponent("security.yaml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        return file
    }
}
