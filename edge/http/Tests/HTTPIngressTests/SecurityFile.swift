import EventBusTesting
import Foundation
import Testing

/// A security file for the tests that run the bus with keys: a fresh broker key beside it,
/// no client, and the HTTP tokens and app-token secret given.
enum SecurityFile {
    /// Writes `security.yaml` and the broker's key into `directory`; the file's path.
    static func write(in directory: URL, tokens: [String: String], jwtSecret: String? = nil) async throws -> URL {
        let keygen = try await RunningProcess.run(BuildFolder.eventbus, ["keygen", "--out", directory.appendingPathComponent("broker").path])
        try #require(keygen.status == 0, "\(keygen.standardError)")
        var yaml = "secret_key_file: broker.secret\nclients: []\nhttp_tokens:\n"
        for (token, role) in tokens.sorted(by: { $0.key < $1.key }) { yaml += "  \"\(token)\": \(role)\n" }
        if let jwtSecret { yaml += "http_jwt_hs256_secret: \"\(jwtSecret)\"\n" }
        let file = directory.appendingPathComponent("security.yaml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        return file
    }
}
