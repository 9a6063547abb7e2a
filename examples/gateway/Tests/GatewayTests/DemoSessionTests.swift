import ChatGateway
import Crypto
import EventBus
import Foundation
import Testing

/// The demo's `/session` answer: where the stream is and an app token eventbus-http accepts
/// (HS256 over the security file's secret, `sub` the user, `exp` the lifetime ahead).
@Suite struct DemoSessionTests {
    static let secret = "app-token-secret-of-the-gateway-test-0123456789"

    static func decode(_ part: Substring) throws -> [UInt8] {
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Array(try #require(Data(base64Encoded: base64)))
    }

    @Test func theTokenIsAnHS256JWTForTheUser() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let session = DemoSession(streamURL: "http://127.0.0.1:8070/", issuer: AppTokenIssuer(secret: Self.secret, lifetime: 600))
        let json = try JSONParser.parse(Array(session.json(for: "bob\"o", now: now).utf8))
        #expect(json["stream"]?.stringValue == "http://127.0.0.1:8070")
        #expect(json["user"]?.stringValue == "bob\"o")
        #expect(json["expires"]?.int64Value == 1_800_000_600)
        let token = try #require(json["token"]?.stringValue)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let header = try JSONParser.parse(try Self.decode(parts[0]))
        #expect(header["alg"]?.stringValue == "HS256")
        let claims = try JSONParser.parse(try Self.decode(parts[1]))
        #expect(claims["sub"]?.stringValue == "bob\"o")
        #expect(claims["exp"]?.int64Value == 1_800_000_600)
        let key = SymmetricKey(data: Array(Self.secret.utf8))
        #expect(HMAC<SHA256>.isValidAuthenticationCode(try Self.decode(parts[2]), authenticating: Array("\(parts[0]).\(parts[1])".utf8), using: key))
        let other = SymmetricKey(data: Array((Self.secret + "x").utf8))
        #expect(!HMAC<SHA256>.isValidAuthenticationCode(try Self.decode(parts[2]), authenticating: Array("\(parts[0]).\(parts[1])".utf8), using: other))
    }
}
