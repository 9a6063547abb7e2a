import EventBus
import EventBusTesting
import Foundation
import HTTPIngress
import Testing

/// `--tls-cert` and `--tls-key`: the real `eventbus-http` speaking HTTPS with a certificate
/// the test makes with `openssl`, curl checking it against that certificate.
@Suite(.serialized) struct TLSTests {
    /// A self-signed P-256 certificate for 127.0.0.1 and localhost, valid one day, and its key.
    static func certificate(in directory: URL) async throws -> (cert: String, key: String) {
        let cert = directory.appendingPathComponent("cert.pem").path, key = directory.appendingPathComponent("key.pem").path
        let openssl = try await RunningProcess.run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", key, "-out", cert,
        ])
        try #require(openssl.status == 0, "openssl (scripts/ensure-deps.sh --test installs it): \(openssl.standardError)")
        return (cert, key)
    }

    /// `curl` with `arguments`; its status and output.
    static func curl(_ arguments: [String]) async throws -> (status: Int32, output: String, error: String) {
        let result = try await RunningProcess.run("/usr/bin/curl", ["-sS", "--max-time", "30"] + arguments)
        return (result.status, result.standardOutput, result.standardError)
    }

    @Test func itPublishesAndQueriesOverHTTPSAndRefusesPlainHTTP() async throws {
        let directory = try TemporaryDirectory.create("eventbus-http-tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cert, key) = try await Self.certificate(in: directory)
        let up = try UpProcess()
        try await up.start()
        try await up.terminateAfter {
            let ingress = try IngressProcess(command: up.commandEndpoint, arguments: ["--tls-cert", cert, "--tls-key", key])
            try await ingress.start()
            #expect(ingress.output.contains("listening on https://127.0.0.1:\(ingress.port)"), "\(ingress.output)")
            let base = "https://127.0.0.1:\(ingress.port)"
            let health = try await Self.curl(["--cacert", cert, base + "/health"])
            #expect(health.status == 0 && health.output == "ok", "\(health)")
            let published = try await Self.curl([
                "--cacert", cert, "-X", "POST", base + "/v1/events", "-H", "Content-Type: application/cloudevents+json",
                "--data-binary", Events.channel("messaging:general", ["ann", "bob"]),
            ])
            #expect(published.status == 0 && published.output.hasPrefix(#"{"seqs":["#), "\(published)")
            let stream = try await Self.curl(["--cacert", cert, "-N", "--max-time", "2", base + "/v1/stream?after=0"])
            #expect(stream.output.hasPrefix(": eventbus stream after 0"), "the stream over TLS: \(stream)")

            // Without the certificate to trust, curl refuses the server; in clear, the server refuses curl.
            let untrusted = try await Self.curl([base + "/health"])
            #expect(untrusted.status == 60, "curl: the peer's certificate is not trusted: \(untrusted)")
            let plain = try await Self.curl(["http://127.0.0.1:\(ingress.port)/health"])
            #expect(plain.status != 0 && plain.output != "ok", "no plain HTTP on a TLS port: \(plain)")
            #expect(try await ingress.terminate() == 0)
        }
    }

    @Test func tlsIsNoSubstituteForTokensBeyondLoopback() async throws {
        let directory = try TemporaryDirectory.create("eventbus-http-tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cert, key) = try await Self.certificate(in: directory)
        let ingress = try IngressProcess(command: "tcp://127.0.0.1:1", arguments: ["--tls-cert", cert, "--tls-key", key])
        await #expect(throws: ProcessError.self) { try await ingress.start(listen: "0.0.0.0:0") }
        #expect(ingress.log.contains("refusing to listen on 0.0.0.0:0 without bearer tokens"), "\(ingress.log)")
    }

    @Test func anUnreadableCertificateOrAHalfPairStopsIt() async throws {
        let directory = try TemporaryDirectory.create("eventbus-http-tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cert, key) = try await Self.certificate(in: directory)
        let missing = try IngressProcess(command: "tcp://127.0.0.1:1", arguments: ["--tls-cert", key, "--tls-key", key])
        await #expect(throws: ProcessError.self) { try await missing.start() }
        #expect(missing.log.contains("--tls-cert \(key)"), "the key is no certificate: \(missing.log)")
        let half = try IngressProcess(command: "tcp://127.0.0.1:1", arguments: ["--tls-cert", cert])
        await #expect(throws: ProcessError.self) { try await half.start() }
        #expect(half.log.contains("--tls-cert and --tls-key go together"), "\(half.log)")
    }
}
