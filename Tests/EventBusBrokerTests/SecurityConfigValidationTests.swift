import Testing
import ZeroMQ

@testable import EventBusBroker

/// docs/security.md: the security file is refused, with a code and the entry at fault,
/// for a bad key, a name that is empty or over 64 bytes, a client with no role, and a
/// name or a public key listed twice.
@Suite struct SecurityConfigValidationTests {
    static let broker = try! CurveKeyPair.generate()
    static let keys = (0..<2).map { _ in try! CurveKeyPair.generate() }

    static func code(_ clients: [SecurityConfig.Client], secret: String = broker.secretKey) -> SecurityConfigError.Code? {
        do {
            try SecurityConfig(secretKey: secret, clients: clients).validate()
            return nil
        } catch {
            return error.code
        }
    }

    @Test func aValidFileIsAccepted() {
        #expect(Self.code([.init(name: "ops", publicKey: Self.keys[0].publicKey, roles: [.admin]),
                           .init(name: "api", publicKey: Self.keys[1].publicKey, roles: [.backend])]) == nil)
    }

    @Test func eachFaultIsRefusedWithItsCode() {
        let one = Self.keys[0].publicKey, two = Self.keys[1].publicKey
        #expect(Self.code([], secret: "not a key") == .invalidKey)
        #expect(Self.code([.init(name: "ops", publicKey: "short", roles: [.admin])]) == .invalidKey)
        #expect(Self.code([.init(name: "", publicKey: one, roles: [.admin])]) == .invalidName)
        #expect(Self.code([.init(name: String(repeating: "n", count: 65), publicKey: one, roles: [.admin])]) == .invalidName)
        #expect(Self.code([.init(name: String(repeating: "n", count: 64), publicKey: one, roles: [.admin])]) == nil)
        #expect(Self.code([.init(name: "ops", publicKey: one, roles: [])]) == .noRole)
        #expect(Self.code([.init(name: "ops", publicKey: one, roles: [.admin]),
                           .init(name: "ops", publicKey: two, roles: [.backend])]) == .duplicate)
        #expect(Self.code([.init(name: "ops", publicKey: one, roles: [.admin]),
                           .init(name: "api", publicKey: one, roles: [.backend])]) == .duplicate)
    }
}
