/// Where the ingress listens: `HOST:PORT` (`[::1]:8080` for IPv6; port 0 picks a free one).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// The host or address, without IPv6 brackets.
    public let host: String
    /// The port, 0 to 65535.
    public let port: Int

    /// Parses `HOST:PORT`.
    public init(_ text: String) throws(IngressError) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else {
            throw IngressError("--listen \(text): expected HOST:PORT, such as 127.0.0.1:8080")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw IngressError("--listen \(text): the host is missing (127.0.0.1:\(port) for this machine only)") }
        self.host = host
        self.port = port
    }

    /// Whether only this machine can reach the address: `localhost`, `::1` or `127.x.x.x`.
    public var isLoopback: Bool {
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isNumber) && (Int(part) ?? 256) <= 255
        }
    }

    public var description: String { "\(Self.display(host)):\(port)" }

    /// `host` as it stands in a URL: an IPv6 address in brackets.
    public static func display(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }
}
