/// A configuration the ingress refuses to start with, found before it listens.
public struct IngressError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
