import EventBusJetStream
import EventBusTesting
import Foundation
import Testing

/// docs/scale-out.md, "A three-machine deployment": its `openssl` lines make an authority
/// and the three servers' certificates, and nats-server accepts machine A's configuration
/// with them (`nats-server -t`: it parses the file and loads the certificates).
@Suite struct DeploymentDocTests {
    static let document = "docs/scale-out.md"

    @Test func theCertificatesAndTheServerConfigurationOfTheDocWork() async throws {
        let directory = try TemporaryDirectory.create("eventbus-deployment-doc")
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = try #require(try MarkdownBlocks.blocks("sh", in: Self.document).first { $0.contains("-CAkey ca-key.pem") })
        let made = try await RunningProcess.run("/bin/bash", ["-c", "set -e; cd '\(directory.path)'; " + script])
        #expect(made.status == 0, "\(made.standardError)")
        for file in ["ca.pem", "nA.pem", "nA-key.pem", "nB.pem", "nC.pem"] {
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(file).path), "\(file)")
        }
        // Each server's certificate is signed by the authority and names its address.
        let verified = try await RunningProcess.run("/usr/bin/openssl", ["verify", "-CAfile", directory.appendingPathComponent("ca.pem").path,
                                                                         directory.appendingPathComponent("nB.pem").path])
        #expect(verified.status == 0, "\(verified.standardOutput) \(verified.standardError)")
        let names = try await RunningProcess.run("/usr/bin/openssl", ["x509", "-noout", "-ext", "subjectAltName", "-in",
                                                                      directory.appendingPathComponent("nB.pem").path])
        #expect(names.standardOutput.contains("IP Address:10.0.0.2"), "\(names.standardOutput)")

        let configuration = try #require(try MarkdownBlocks.blocks("conf", in: Self.document).first { $0.contains("server_name: nA") })
        #expect(configuration.contains("sync_interval: always"))
        let local = configuration
            .replacingOccurrences(of: "/etc/eventbus/", with: directory.path + "/")
            .replacingOccurrences(of: "/var/lib/eventbus/nats", with: directory.appendingPathComponent("store").path)
        let file = directory.appendingPathComponent("nA.conf")
        try local.write(to: file, atomically: true, encoding: .utf8)
        let checked = try await RunningProcess.run(try ServerBinary.find(), ["-t", "-c", file.path])
        #expect(checked.status == 0, "nats-server -t: \(checked.standardOutput) \(checked.standardError)")
    }
}
