import Foundation
import EventBusSupervisor
import HTTPIngress
import Testing

/// Bearer tokens to roles, and the bind rule, without I/O.
@Suite struct IngressAccessTests {
    static let backend = "backend-token-0123456789"
    static let subscriber = "subscriber-token-0123456789"
    static let admin = "admin-token-0123456789ab"

    static func access() throws -> IngressAccess {
        IngressAccess(tokens: try HTTPTokens([backend: "backend", subscriber: "subscriber", admin: "admin"]))
    }

    static func status(_ access: IngressAccess, _ authorization: String?, _ action: IngressAccess.Action) -> Int {
        do {
            try access.check(authorization: authorization, for: action)
            return 200
        } catch {
            return error.status
        }
    }

    @Test func rolesDecide() throws {
        let access = try Self.access()
        for action in IngressAccess.Action.allCases {
            #expect(Self.status(access, "Bearer \(Self.backend)", action) == 200)
            #expect(Self.status(access, "bearer \(Self.admin)", action) == 200)
            #expect(Self.status(access, "Bearer \(Self.subscriber)", action) == (action == .stream ? 200 : 403), "\(action)")
            #expect(Self.status(access, "Bearer \(Self.backend)x", action) == 401)
            #expect(Self.status(access, "Bearer \(Self.backend.dropLast())", action) == 401)
            #expect(Self.status(access, nil, action) == 401)
            #expect(Self.status(access, "Basic dXNlcjpwYXNz", action) == 401)
        }
    }

    @Test func appTokensMayOnlyStream() throws {
        let verifier = try AppTokenVerifier(secret: AppTokenVerifierTests.secret)
        let access = IngressAccess(tokens: try HTTPTokens([Self.backend: "backend"]), appTokens: verifier)
        let bob = "Bearer " + verifier.sign(user: "bob", expires: .distantFuture)
        #expect(try access.check(authorization: bob, for: .stream) == .user("bob"))
        #expect(try access.check(authorization: "Bearer \(Self.backend)", for: .stream) == .role(.backend))
        for action in IngressAccess.Action.allCases where action != .stream {
            #expect(Self.status(access, bob, action) == 403, "\(action)")
        }
        let other = try AppTokenVerifier(secret: AppTokenVerifierTests.secret + "-other")
        #expect(Self.status(access, "Bearer " + other.sign(user: "bob", expires: .distantFuture), .stream) == 401)
        #expect(Self.status(access, "Bearer " + verifier.sign(user: "bob", expires: Date(timeIntervalSince1970: 0)), .stream) == 401)
        #expect(Self.status(access, nil, .stream) == 401)
        // Without a secret, a JWT is just an unknown token.
        let noSecret = IngressAccess(tokens: try HTTPTokens([Self.backend: "backend"]))
        #expect(Self.status(noSecret, bob, .stream) == 401)
        #expect(IngressAccess(tokens: .none, appTokens: verifier).requiresToken)
    }

    @Test func withoutTokensEveryRequestIsLetIn() {
        let open = IngressAccess(tokens: .none)
        #expect(!open.requiresToken)
        #expect(Self.status(open, nil, .publish) == 200)
    }

    @Test func tokensAndRolesAreChecked() {
        #expect(throws: PipelineError.self) { try HTTPTokens(["short": "backend"]) }
        #expect(throws: PipelineError.self) { try HTTPTokens(["has space in the token 123": "backend"]) }
        #expect(throws: PipelineError.self) { try HTTPTokens([Self.backend: "plugin:receipt-reducer"]) }
        #expect(throws: PipelineError.self) { try HTTPTokens([Self.backend: "root"]) }
        #expect(HTTPTokens.isValidToken("abcdefghijklmnop=="))
        #expect(!HTTPTokens.isValidToken("abcdefgh=ijklmnop"))
    }

    @Test func listeningBeyondLoopbackNeedsTokens() throws {
        let open = IngressAccess(tokens: .none)
        for address in ["127.0.0.1:8080", "localhost:0", "[::1]:8080", "127.1.2.3:1"] {
            #expect(try ListenAddress(address).isLoopback, "\(address)")
            try IngressConfig(listen: ListenAddress(address), commandEndpoint: "ipc://x", access: open).validate()
        }
        for address in ["0.0.0.0:8080", "[::]:8080", "10.0.0.1:80", "128.0.0.1:80", "127.0.0.256:80"] {
            let config = IngressConfig(listen: try ListenAddress(address), commandEndpoint: "ipc://x", access: open)
            #expect(throws: IngressError.self, "\(address)") { try config.validate() }
            try IngressConfig(listen: ListenAddress(address), commandEndpoint: "ipc://x", access: try Self.access()).validate()
            try IngressConfig(listen: ListenAddress(address), commandEndpoint: "ipc://x", access: open, allowInsecureBind: true).validate()
        }
        #expect(throws: IngressError.self) { try ListenAddress("8080") }
        #expect(throws: IngressError.self) { try ListenAddress(":8080") }
        #expect(throws: IngressError.self) { try ListenAddress("127.0.0.1:70000") }
    }
}
