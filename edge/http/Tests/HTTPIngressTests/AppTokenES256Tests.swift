import EventBusSupervisor
import Foundation
import HTTPIngress
import Testing

/// Per-user app tokens signed ES256 (ECDSA P-256, SHA-256) and checked with the public keys of
/// the security file's `http_jwt_es256_keys`, without I/O.
@Suite struct AppTokenES256Tests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let future = Date(timeIntervalSince1970: 4_102_444_800)
    /// Made by another implementation (Python's cryptography, r‖s of its DER signature), with
    /// the private key of `knownKey`: header alg ES256, kid app-1; sub bob, exp 2100-01-01.
    static let known = "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6ImFwcC0xIn0.eyJzdWIiOiJib2IiLCJleHAiOjQxMDI0NDQ4MDB9."
        + "gOdAUIqQRp1NvYEu-t6HpNDS0Fjz9ESrbtUFjDwE2ptOHDL-Ot6rXZ15XzgnHqrBYDrIKw-yxbxMYwAXeKteww"
    static let knownX = "qI5AUMK2tNBlQWHNU6fSfNCgk_BU0vC1-ECPx3_1Vco"
    static let knownY = "owJL7_9g-cy_NxJeeCY6ad27j83O85erffCFVU_BU2s"

    static func bytes(_ base64URL: String) throws -> [UInt8] {
        var text = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        return Array(try #require(Data(base64Encoded: text)))
    }

    static func knownKey(kid: String? = "app-1") throws -> AppTokenKey {
        try AppTokenKey(SecurityConfigFile.ES256Key(keyID: kid, x: try bytes(knownX), y: try bytes(knownY)), index: 0)
    }

    static func refusal(_ token: String, _ verifier: AppTokenVerifier, now: Date = now) -> String? {
        do {
            _ = try verifier.verify(token, now: now)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func aTokenOfAnotherImplementationVerifies() throws {
        let verifier = try AppTokenVerifier(hs256Secret: nil, es256Keys: [try Self.knownKey()])
        #expect(verifier.algorithms == ["ES256"])
        #expect(try verifier.verify(Self.known, now: Self.now) == AppToken(user: "bob", expires: Self.future))
        let parts = Self.known.split(separator: ".").map(String.init)
        let ann = ES256Signer.part(Array(#"{"sub":"ann","exp":4102444800}"#.utf8))
        #expect(Self.refusal("\(parts[0]).\(ann).\(parts[2])", verifier)?.contains("signature does not match the ES256 key app-1") == true,
                "a payload swapped under bob's signature")
        #expect(Self.refusal(Self.known, verifier, now: Self.future.addingTimeInterval(61))?.contains("expired") == true)
        #expect(Self.refusal(Self.known, verifier, now: Self.future.addingTimeInterval(59)) == nil, "within the leeway")
    }

    @Test func aValidTokenAWrongSignatureAndAnExpiredOne() throws {
        let signer = ES256Signer()
        let verifier = try AppTokenVerifier(hs256Secret: nil, es256Keys: [signer.key])
        let token = try signer.sign(user: "bob", expires: Self.future)
        #expect(try verifier.verify(token, now: Self.now).user == "bob")
        let stranger = try ES256Signer().sign(user: "bob", expires: Self.future)
        #expect(Self.refusal(stranger, verifier)?.contains("signature") == true, "another key's token")
        let parts = token.split(separator: ".").map(String.init)
        var flipped = try Self.bytes(parts[2])
        flipped[40] ^= 0x01
        #expect(Self.refusal("\(parts[0]).\(parts[1]).\(ES256Signer.part(flipped))", verifier)?.contains("signature") == true)
        #expect(Self.refusal("\(parts[0]).\(parts[1]).\(ES256Signer.part(flipped.prefix(63)))", verifier)?.contains("signature") == true,
                "not the 64 bytes of r‖s")
        #expect(Self.refusal("\(parts[0]).\(parts[1]).", verifier)?.contains("signature") == true)
        let expired = try signer.sign(user: "bob", expires: Self.now.addingTimeInterval(-61))
        #expect(Self.refusal(expired, verifier)?.contains("expired") == true)
        let early = try signer.sign(header: #"{"alg":"ES256"}"#, claims: #"{"sub":"bob","exp":4102444800,"nbf":1800000100}"#)
        #expect(Self.refusal(early, verifier)?.contains("nbf") == true)
        #expect(Self.refusal(try signer.sign(user: "@bob", expires: Self.future), verifier)?.contains("sub") == true)
    }

    @Test func onlyTheConfiguredAlgorithmsAreAccepted() throws {
        let signer = ES256Signer()
        let esOnly = try AppTokenVerifier(hs256Secret: nil, es256Keys: [signer.key])
        let claims = try signer.sign(user: "bob", expires: Self.future).split(separator: ".")[1]
        // HS256 with the public key as the HMAC secret, which anyone can read (the key confusion of RFC 8725, 2.1).
        let hs = try AppTokenVerifier(secret: signer.jwk)
        let hsToken = hs.sign(user: "bob", expires: Self.future)
        #expect(Self.refusal(hsToken, esOnly) == "the JWT's alg is HS256: only ES256 accepted here", "\(Self.refusal(hsToken, esOnly) ?? "accepted")")
        let none = ES256Signer.part(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
        #expect(Self.refusal("\(none).\(claims).", esOnly)?.contains("alg is none") == true)
        let missing = ES256Signer.part(Array(#"{"typ":"JWT"}"#.utf8))
        #expect(Self.refusal("\(missing).\(claims).", esOnly)?.contains("alg is missing") == true)
        let es384 = try signer.sign(header: #"{"alg":"ES384","typ":"JWT"}"#, claims: #"{"sub":"bob","exp":4102444800}"#)
        #expect(Self.refusal(es384, esOnly)?.contains("alg is ES384") == true)
        let crit = try signer.sign(header: #"{"alg":"ES256","crit":["exp"]}"#, claims: #"{"sub":"bob","exp":4102444800}"#)
        #expect(Self.refusal(crit, esOnly)?.contains("crit") == true)

        // An HS256-only server refuses ES256; with both, each goes by its own key.
        let secret = "a-test-secret-of-at-least-32-bytes-0123"
        let esToken = try signer.sign(user: "bob", expires: Self.future)
        #expect(Self.refusal(esToken, try AppTokenVerifier(secret: secret)) == "the JWT's alg is ES256: only HS256 accepted here")
        let both = try AppTokenVerifier(hs256Secret: secret, es256Keys: [signer.key])
        #expect(both.algorithms == ["HS256", "ES256"])
        #expect(try both.verify(esToken, now: Self.now).user == "bob")
        #expect(try both.verify(AppTokenVerifier(secret: secret).sign(user: "ann", expires: Self.future), now: Self.now).user == "ann")
        #expect(Self.refusal(hsToken, both)?.contains("http_jwt_hs256_secret") == true, "HS256 under another secret")
    }

    @Test func severalKeysArePickedByKid() throws {
        let old = ES256Signer(keyID: "app-2026"), new = ES256Signer(keyID: "app-2027"), unlisted = ES256Signer(keyID: "app-2028")
        let verifier = try AppTokenVerifier(hs256Secret: nil, es256Keys: [old.key, new.key])
        #expect(try verifier.verify(old.sign(user: "ann", expires: Self.future), now: Self.now).user == "ann")
        #expect(try verifier.verify(new.sign(user: "bob", expires: Self.future), now: Self.now).user == "bob")
        #expect(Self.refusal(try unlisted.sign(user: "bob", expires: Self.future), verifier) == "the JWT's kid app-2028 is not one of http_jwt_es256_keys")
        let claims = #"{"sub":"bob","exp":4102444800}"#
        #expect(Self.refusal(try new.sign(header: #"{"alg":"ES256","kid":"app-2026"}"#, claims: claims), verifier)?
            .contains("does not match the ES256 key app-2026") == true, "signed by one key, naming the other")
        #expect(Self.refusal(try new.sign(header: #"{"alg":"ES256"}"#, claims: claims), verifier)?.contains("no kid") == true)
        #expect(Self.refusal(try new.sign(header: #"{"alg":"ES256","kid":7}"#, claims: claims), verifier)?.contains("kid is not a string") == true)

        // One key: a token without kid uses it; one without a kid of its own takes any kid.
        let only = try AppTokenVerifier(hs256Secret: nil, es256Keys: [new.key])
        #expect(try only.verify(new.sign(header: #"{"alg":"ES256"}"#, claims: claims), now: Self.now).user == "bob")
        #expect(Self.refusal(try new.sign(header: #"{"alg":"ES256","kid":"other"}"#, claims: claims), only)?.contains("kid other") == true)
        let anonymous = ES256Signer()
        let single = try AppTokenVerifier(hs256Secret: nil, es256Keys: [anonymous.key])
        #expect(try single.verify(anonymous.sign(header: #"{"alg":"ES256","kid":"any"}"#, claims: claims), now: Self.now).user == "bob")

        #expect(throws: AppTokenError.self) { try AppTokenVerifier(hs256Secret: nil, es256Keys: [old.key, ES256Signer().key]) }
        #expect(throws: AppTokenError.self) { try AppTokenVerifier(hs256Secret: nil, es256Keys: [old.key, ES256Signer(keyID: "app-2026").key]) }
        #expect(throws: AppTokenError.self) { try AppTokenVerifier(hs256Secret: nil, es256Keys: []) }
    }

    @Test func aKeyOffTheCurveIsRefusedNamingIt() throws {
        let x = try Self.bytes(Self.knownX)
        var y = try Self.bytes(Self.knownY)
        y[31] ^= 0x01
        #expect(throws: AppTokenError("http_jwt_es256_keys[2] (kid app-1): x and y are not a point of P-256")) {
            try AppTokenKey(SecurityConfigFile.ES256Key(keyID: "app-1", x: x, y: y), index: 2)
        }
    }
}
