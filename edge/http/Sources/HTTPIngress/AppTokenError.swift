/// Why an app token (a JWT, ``AppTokenVerifier``) was refused: for the 401's detail and the log.
public struct AppTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
