import EventBusTesting
import Foundation
import NATS
import Testing

/// ``ConnectOptions/trustedCertificates``: TLS to a server whose certificate the given
/// authorities signed, and nothing else.
@Suite struct TLSTests {
    @Test func aServerSignedByTheTrustedAuthorityIsReachedOverTLS() async throws {
        let directory = try TemporaryDirectory.create("eventbus-nats-tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory)
        let server = try NATSServer(tls: certificate)
        let connection = try server.connect()
        defer { connection.close() }
        let js = try JetStream(connection: connection)
        try js.addStream(StreamConfig(name: "SECRET", subjects: ["secret"], storage: .memory))
        #expect(try await js.publishAsync("secret", Array("hello".utf8)).sequence == 1)
    }

    /// Every way of not checking the server is refused: no authority given, another
    /// authority, and a server that does not speak TLS to a client that asks for it.
    @Test func aServerThatCannotBeCheckedIsRefused() async throws {
        let directory = try TemporaryDirectory.create("eventbus-nats-tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory)
        let stranger = try await TestCertificate.make(in: directory, name: "stranger")
        let server = try NATSServer(tls: certificate)
        func connect(_ url: String, trusting authorities: String?) throws -> Connection {
            try Connection(ConnectOptions(servers: [url], timeout: .seconds(2), allowReconnect: false, trustedCertificates: authorities))
        }
        #expect(throws: NATSError.self) { try connect(server.url, trusting: nil) }
        let wrong = #expect(throws: NATSError.self) { try connect(server.url, trusting: stranger.certificate) }
        #expect(wrong?.description.contains("127.0.0.1") == true, "the error names the server: \(String(describing: wrong))")
        let missing = #expect(throws: NATSError.self) { try connect(server.url, trusting: directory.appendingPathComponent("none.pem").path) }
        #expect(missing?.description.contains("trusted certificates") == true, "\(String(describing: missing))")

        let plain = try NATSServer()
        #expect(throws: NATSError.self) { try connect(plain.url, trusting: certificate.certificate) }
    }
}
