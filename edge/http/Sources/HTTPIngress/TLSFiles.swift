import Foundation
import HummingbirdTLS
import NIOSSL

/// The certificate and key that make `eventbus-http` speak HTTPS (`--tls-cert`, `--tls-key`):
/// PEM files, the certificate file holding the server's certificate first and then any
/// intermediates. Read once at start; a renewed certificate takes a restart.
public struct TLSFiles: Sendable, Equatable {
    public let certificate: String
    public let key: String

    public init(certificate: String, key: String) {
        self.certificate = certificate
        self.key = key
    }

    /// The server's TLS configuration (TLS 1.2 and up, swift-nio-ssl's defaults otherwise).
    ///
    /// - Throws: ``IngressError`` naming the file that could not be read.
    public func configuration() throws(IngressError) -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMFile(certificate) } catch {
            throw IngressError("--tls-cert \(certificate): not a readable PEM certificate (\(error))")
        }
        guard !chain.isEmpty else { throw IngressError("--tls-cert \(certificate): no certificate in the file") }
        let privateKey: NIOSSLPrivateKey
        do { privateKey = try NIOSSLPrivateKey(file: key, format: .pem) } catch {
            throw IngressError("--tls-key \(key): not a readable PEM private key (\(error))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12
        return configuration
    }
}
