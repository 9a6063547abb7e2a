/// A server URL as it may be written, with a user and password (`nats://user:secret@host:port`,
/// which libnats reads): what of it may be shown.
public enum ServerURL {
    /// `url` with its password replaced by `***` (`nats://user:***@host:port`), for logs
    /// and error messages; a URL without credentials is returned as it is.
    public static func redacted(_ url: String) -> String {
        let start = url.range(of: "://")?.upperBound ?? url.startIndex
        guard let at = url[start...].lastIndex(of: "@") else { return url }
        let userInfo = url[start..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }

    /// `urls`, each ``redacted(_:)``, comma-separated.
    public static func redacted(_ urls: [String]) -> String {
        urls.map { redacted($0) }.joined(separator: ",")
    }

    /// The `host:port` part: after the scheme and any `user:password@`.
    public static func hostPart(_ url: Substring) -> Substring {
        let start = url.range(of: "://")?.upperBound ?? url.startIndex
        guard let at = url[start...].lastIndex(of: "@") else { return url[start...] }
        return url[url.index(after: at)...]
    }
}
