import Foundation
import HTTPIngress
import Testing

/// Per-user app tokens (JWT HS256), without I/O.
@Suite struct AppTokenVerifierTests {
    static let secret = "a-test-secret-of-at-least-32-bytes-0123"
    /// Made by another implementation (Python's hmac and base64) with `secret`: sub bob, exp 2100-01-01.
    static let known = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJib2IiLCJleHAiOjQxMDI0NDQ4MDB9.O3hlq_ew511ekOpB41YTQqAjEGROd9NEClEFooAsMtY"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func refusal(_ token: String, secret: String = secret, now: Date = now) -> String? {
        do {
            _ = try AppTokenVerifier(secret: secret).verify(token, now: now)
            return nil
        } catch {
            return error.description
        }
    }

    static func part(_ json: String) -> String {
        Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test func aTokenOfAnotherImplementationVerifies() throws {
        let token = try AppTokenVerifier(secret: Self.secret).verify(Self.known, now: Self.now)
        #expect(token == AppToken(user: "bob", expires: Date(timeIntervalSince1970: 4_102_444_800)))
        let verifier = try AppTokenVerifier(secret: Self.secret)
        #expect(verifier.sign(user: "bob", expires: Date(timeIntervalSince1970: 4_102_444_800)) == Self.known)
    }

    @Test func theSignatureAlgorithmAndClaimsAreChecked() throws {
        let verifier = try AppTokenVerifier(secret: Self.secret)
        let parts = Self.known.split(separator: ".").map(String.init)
        #expect(Self.refusal(Self.known, secret: Self.secret + "x")?.contains("signature") == true)
        let ann = Self.part(#"{"sub":"ann","exp":4102444800}"#)
        #expect(Self.refusal("\(parts[0]).\(ann).\(parts[2])")?.contains("signature") == true, "a payload swapped under bob's signature")
        #expect(Self.refusal("\(Self.part(#"{"alg":"none"}"#)).\(parts[1]).")?.contains("alg") == true)
        #expect(Self.refusal("\(Self.part(#"{"alg":"HS512","typ":"JWT"}"#)).\(parts[1]).\(parts[2])")?.contains("alg") == true)
        #expect(Self.refusal("\(parts[0]).\(parts[1])")?.contains("not a JWT") == true)
        #expect(Self.refusal("a.b.c")?.contains("header") == true)
        #expect(Self.refusal(Self.known, now: Date(timeIntervalSince1970: 4_102_444_800 + 61))?.contains("expired") == true)
        #expect(Self.refusal(Self.known, now: Date(timeIntervalSince1970: 4_102_444_800 + 59)) == nil, "within the leeway")
        let signed = { (claims: String) in verifier.sign(claims: Array(claims.utf8)) }
        #expect(Self.refusal(signed(#"{"sub":"bob"}"#))?.contains("exp") == true)
        #expect(Self.refusal(signed(#"{"sub":"bob","exp":"4102444800"}"#))?.contains("exp") == true)
        #expect(Self.refusal(signed(#"{"sub":"bob","exp":4102444800,"nbf":1800000100}"#))?.contains("nbf") == true)
        #expect(Self.refusal(signed(#"{"sub":"bob","exp":4102444800,"nbf":1800000030}"#)) == nil, "nbf within the leeway")
        #expect(Self.refusal(signed(#"{"sub":7,"exp":4102444800}"#))?.contains("sub") == true)
        #expect(Self.refusal(signed(#"["bob"]"#))?.contains("payload") == true)
        #expect(throws: AppTokenError.self) { try AppTokenVerifier(secret: "too-short-secret") }
    }

    @Test func claimsOfASignedToken() throws {
        let verifier = try AppTokenVerifier(secret: Self.secret)
        let future = Date(timeIntervalSince1970: 4_000_000_000)
        #expect(try verifier.verify(verifier.sign(user: "bob@example.com", expires: future), now: Self.now).user == "bob@example.com")
        #expect(Self.refusal(verifier.sign(user: "@bob", expires: future))?.contains("sub") == true)
        #expect(Self.refusal(verifier.sign(user: "", expires: future))?.contains("sub") == true)
        #expect(Self.refusal(verifier.sign(user: "bob", expires: Date(timeIntervalSince1970: 1_700_000_000)))?.contains("expired") == true)
    }
}
