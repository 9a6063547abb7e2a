import ArgumentParser
import Foundation
import ZeroMQ

/// `eventbus keygen`: a new CURVE key pair in two files, `PREFIX.pub` (0644)
/// and `PREFIX.secret` (0600).
struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Write a new CURVE key pair: PREFIX.pub (public, mode 0644) and PREFIX.secret (secret, mode 0600), Z85.",
        discussion: """
            Give the broker its secret file in the security file (secret_key_file) and each client the broker's \
            .pub; list each client's .pub in the security file with its role. See docs/security.md.
            """)

    @Option(help: ArgumentHelp("The path prefix of the two files.", valueName: "PREFIX"))
    var out = "eventbus"

    @Flag(help: "Replace existing files.")
    var force = false

    func run() throws {
        guard CurveKeyPair.isSupported else { throw Output.fail("this libzmq was built without CURVE support") }
        let publicPath = out + ".pub", secretPath = out + ".secret"
        if !force, let existing = [publicPath, secretPath].first(where: { FileManager.default.fileExists(atPath: $0) }) {
            throw Output.fail("\(existing) exists; pass --force to replace it")
        }
        do {
            let pair = try CurveKeyPair.generate()
            try CurveKeyFile.write(pair.secretKey, comment: "eventbus CURVE secret key: keep private (mode 0600)", to: secretPath, mode: 0o600)
            try CurveKeyFile.write(pair.publicKey, comment: "eventbus CURVE public key", to: publicPath, mode: 0o644)
            Output.line(pair.publicKey)
        } catch {
            throw Output.fail("cannot write the key pair: \(error)")
        }
    }
}
