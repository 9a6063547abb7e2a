import EventBusTesting
import Foundation
import Testing

/// What docs/http.md describes: `eventbus up --http` on a free port (open, loopback), and
/// beside it an `eventbus-http` with the doc's security file (its `http_tokens`), against
/// the same bus. For the tests that hold the server to the doc and to docs/openapi.yaml.
struct DocumentedServers {
    let up: UpProcess
    let openPort: Int
    let secured: IngressProcess

    static let document = "docs/http.md"

    /// The doc's security file, with a fresh broker key beside it, in `directory`.
    static func securityFile(in directory: URL) async throws -> String {
        let keygen = try await RunningProcess.run(BuildFolder.eventbus, ["keygen", "--out", directory.appendingPathComponent("broker").path])
        try #require(keygen.status == 0, "\(keygen.standardError)")
        let yaml = try #require(try MarkdownBlocks.blocks("yaml", in: document).first { $0.contains("http_tokens:") })
        let file = directory.appendingPathComponent("security.yaml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    /// Runs `body` with both servers up; stops them after.
    static func run(_ body: (DocumentedServers) async throws -> Void) async throws {
        let directory = try TemporaryDirectory.create("eventbus-http-doc")
        defer { try? FileManager.default.removeItem(at: directory) }
        let security = try await securityFile(in: directory)
        let port = try EphemeralEndpoint.freePort()
        let up = try UpProcess(arguments: ["--http", "127.0.0.1:\(port)"], environment: ["EVENTBUS_HTTP": BuildFolder.http])
        try await up.start()
        try await up.terminateAfter {
            try await UpWithHTTPTests.waitForHealth("http://127.0.0.1:\(port)", up)
            let secured = try IngressProcess(command: up.commandEndpoint, arguments: ["--security", security])
            try await secured.start()
            try await body(DocumentedServers(up: up, openPort: port, secured: secured))
            try await secured.terminate()
        }
    }
}
