import Foundation

/// A self-signed P-256 certificate for 127.0.0.1 and localhost, valid one day, and its key,
/// made with `openssl` (`scripts/ensure-deps.sh --test` installs it): a server presents it,
/// and a client trusts it as its own authority.
public struct TestCertificate: Sendable {
    /// The certificate, PEM.
    public let certificate: String
    /// Its private key, PEM.
    public let key: String

    /// Writes `NAME.pem` and `NAME-key.pem` in `directory`.
    public static func make(in directory: URL, name: String = "server") async throws -> TestCertificate {
        let certificate = directory.appendingPathComponent("\(name).pem").path
        let key = directory.appendingPathComponent("\(name)-key.pem").path
        let openssl = try await RunningProcess.run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=eventbus-test", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", key, "-out", certificate,
        ])
        guard openssl.status == 0 else {
            throw ProcessError("openssl req exited \(openssl.status) (scripts/ensure-deps.sh --test installs it): \(openssl.standardError)")
        }
        return TestCertificate(certificate: certificate, key: key)
    }
}
