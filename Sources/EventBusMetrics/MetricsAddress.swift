/// A loopback `HOST:PORT` for the metrics endpoint.
///
/// Only loopback hosts are accepted: the endpoint has no authentication, so it
/// is meant to be scraped by an agent on the same machine.
public struct MetricsAddress: Sendable, Equatable, CustomStringConvertible {
    /// The host as written: an IPv4 address in 127.0.0.0/8, `::1` or `localhost`.
    public let host: String
    /// The TCP port; 0 asks the system for a free one.
    public let port: UInt16

    /// Parses `127.0.0.1:9464`, `[::1]:9464` or `localhost:9464`.
    ///
    /// - Throws: ``MetricsServerError`` naming what is wrong, including a host that is not loopback.
    public init(parsing text: String) throws(MetricsServerError) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw MetricsServerError(.invalidAddress, "--metrics \(text): expected [::1]:PORT")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw MetricsServerError(.invalidAddress, "--metrics \(text): expected HOST:PORT") }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = UInt16(portText) else { throw MetricsServerError(.invalidAddress, "--metrics \(text): the port must be 0 to 65535") }
        guard Self.isLoopback(host) else {
            throw MetricsServerError(.invalidAddress, "--metrics \(text): the metrics endpoint binds loopback only (127.0.0.1, [::1] or localhost)")
        }
        self.host = host == "localhost" ? "127.0.0.1" : String(host)
        self.port = port
    }

    /// An address from its parts; `host` must be loopback.
    init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Whether the address is IPv6.
    var isIPv6: Bool { host.contains(":") }

    /// `HOST:PORT`, with brackets around an IPv6 host.
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    private static func isLoopback(_ host: Substring) -> Bool {
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else { return false }
        return parts[0] == "127"
    }
}
