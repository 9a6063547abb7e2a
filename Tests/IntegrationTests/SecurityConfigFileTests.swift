import EventBusSupervisor
import Foundation
import Testing
import ZeroMQ

/// The security file's entries for eventbus-http (docs/http.md, "Tokens"), read by the broker
/// and the ingress alike: `http_jwt_es256_keys`, the public keys of ES256 app tokens.
@Suite struct SecurityConfigFileTests {
    /// A P-256 public key as a JWK's coordinates (RFC 7515 base64url): any 32 bytes pass here,
    /// whether they are on the curve is eventbus-http's to check.
    static let x = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
    static let y = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"

    /// A folder with the broker's key and a security file of `yaml` after `secret_key_file`.
    static func file(_ yaml: String) throws -> (folder: URL, path: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-secfile-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let pair = try CurveKeyPair.generate()
        try CurveKeyFile.write(pair.secretKey, comment: "test broker", to: folder.appendingPathComponent("broker.secret").path, mode: 0o600)
        let path = folder.appendingPathComponent("security.yaml").path
        try ("secret_key_file: broker.secret\nclients: []\n" + yaml).write(toFile: path, atomically: true, encoding: .utf8)
        return (folder, path)
    }

    /// The error of reading `yaml`'s ES256 keys, or nil when they load.
    static func refusal(_ yaml: String) throws -> String? {
        let (folder, path) = try file(yaml)
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            _ = try SecurityConfigFile.load(path: path)
            _ = try SecurityConfigFile.httpJWTES256Keys(path: path)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func es256KeysAreReadAsJWKs() throws {
        let (folder, path) = try Self.file("""
            http_jwt_hs256_secret: "a-secret-of-at-least-32-bytes-for-hs256"
            http_jwt_es256_keys:
              - {"kty": "EC", "crv": "P-256", "kid": "app-2026", "alg": "ES256", "use": "sig", "x": "\(Self.x)", "y": "\(Self.y)"}
              - kty: EC
                crv: P-256
                kid: app-2027
                x: \(Self.x)
                y: \(Self.y)

            """)
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try SecurityConfigFile.load(path: path)  // the broker accepts the file
        let keys = try SecurityConfigFile.httpJWTES256Keys(path: path)
        #expect(keys.map(\.keyID) == ["app-2026", "app-2027"])
        #expect(keys.allSatisfy { $0.x.count == 32 && $0.y.count == 32 })
        #expect(keys[0].x.prefix(3) == [0x7F, 0xCD, 0xCE] && keys[0].y.suffix(2) == [0xE5, 0xAD])
        #expect(try SecurityConfigFile.httpJWTSecret(path: path) == "a-secret-of-at-least-32-bytes-for-hs256")

        let (none, nonePath) = try Self.file("")
        defer { try? FileManager.default.removeItem(at: none) }
        #expect(try SecurityConfigFile.httpJWTES256Keys(path: nonePath).isEmpty)
        #expect(try Self.refusal("http_jwt_es256_keys:\n  - {\"kty\": \"EC\", \"crv\": \"P-256\", \"x\": \"\(Self.x)\", \"y\": \"\(Self.y)\"}\n") == nil,
                "one key needs no kid")
    }

    @Test func aMalformedKeyIsRefusedNamingIt() throws {
        func key(_ members: String) -> String { "http_jwt_es256_keys:\n  - {\(members)}\n" }
        let good = #""kty": "EC", "crv": "P-256", "kid": "k1""#
        let cases: [(yaml: String, says: String)] = [
            ("http_jwt_es256_keys: \"\(Self.x)\"\n", "http_jwt_es256_keys must be a non-empty list of JWKs"),
            ("http_jwt_es256_keys: []\n", "http_jwt_es256_keys must be a non-empty list of JWKs"),
            ("http_jwt_es256_keys:\n  - \"-----BEGIN PUBLIC KEY-----\"\n", "http_jwt_es256_keys[0]: must be a JWK"),
            (key(#""kty": "RSA", "crv": "P-256", "x": "\#(Self.x)", "y": "\#(Self.y)""#), "http_jwt_es256_keys[0]: must have kty EC and crv P-256"),
            (key(#""kty": "EC", "crv": "P-384", "x": "\#(Self.x)", "y": "\#(Self.y)""#), "http_jwt_es256_keys[0]: must have kty EC and crv P-256"),
            (key(#"\#(good), "x": "\#(Self.x)""#), "http_jwt_es256_keys[0]: y must be the base64url of 32 bytes"),
            (key(#"\#(good), "x": "\#(Self.x.dropLast(2))", "y": "\#(Self.y)""#), "http_jwt_es256_keys[0]: x must be the base64url of 32 bytes"),
            (key(#"\#(good), "x": "+\#(Self.x.dropFirst())", "y": "\#(Self.y)""#), "x must be the base64url"),
            (key(#"\#(good), "x": "\#(Self.x)", "y": "\#(Self.y.replacingOccurrences(of: "_", with: "/"))""#), "y must be the base64url"),
            (key(#"\#(good), "x": "\#(Self.x)", "y": "\#(Self.y)", "d": "\#(Self.x)""#), "http_jwt_es256_keys[0]: has d, a private key"),
            (key(#"\#(good), "x": "\#(Self.x)", "y": "\#(Self.y)", "alg": "HS256""#), "http_jwt_es256_keys[0]: alg must be ES256"),
            (key(#"\#(good), "x": "\#(Self.x)", "y": "\#(Self.y)", "use": "enc""#), "http_jwt_es256_keys[0]: use must be sig"),
            (key(#"\#(good), "x": "\#(Self.x)", "y": "\#(Self.y)", "x5c": []"#), "http_jwt_es256_keys[0]: has an unknown member \"x5c\""),
            (key(#""kty": "EC", "crv": "P-256", "kid": "", "x": "\#(Self.x)", "y": "\#(Self.y)""#), "kid must be a non-empty string"),
            (key(#"\#(good), "x": "\#(Self.x)", "y": "\#(Self.y)""#) + "  - {\"kty\": \"EC\", \"crv\": \"P-256\", \"x\": \"\(Self.x)\", \"y\": \"\(Self.y)\"}\n",
             "http_jwt_es256_keys[1]: kid is required when there are several keys"),
            (key(#"\#(good), "x": "\#(Self.x)", "y": "\#(Self.y)""#) + "  - {\(good), \"x\": \"\(Self.x)\", \"y\": \"\(Self.y)\"}\n",
             "http_jwt_es256_keys[1]: kid k1 is given twice"),
            ("http_jwt_rs256_keys: []\n", "unknown key \"http_jwt_rs256_keys\""),
        ]
        for (yaml, says) in cases {
            let refusal = try Self.refusal(yaml)
            #expect(refusal?.contains(says) == true, "\(yaml): \(refusal ?? "accepted")")
        }
    }
}
