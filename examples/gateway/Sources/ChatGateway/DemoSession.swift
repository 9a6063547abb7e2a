import Foundation

/// What the browser demo needs to follow one user's events on `eventbus-http`'s per-user
/// stream (docs/http.md, "The stream"): where the stream is and an app token for the user.
/// `GET /session?user=alice` answers it as JSON.
public struct DemoSession: Sendable {
    /// The base URL of `eventbus-http` as the browser reaches it (`http://127.0.0.1:8070`).
    public let streamURL: String
    /// Signs the users' app tokens.
    public let issuer: AppTokenIssuer

    public init(streamURL: String, issuer: AppTokenIssuer) {
        self.streamURL = streamURL.hasSuffix("/") ? String(streamURL.dropLast()) : streamURL
        self.issuer = issuer
    }

    /// The session of `user` as JSON: `{"user":…,"stream":…,"token":…,"expires":…}`.
    public func json(for user: String, now: Date = Date()) -> String {
        let (token, expires) = issuer.token(for: user, now: now)
        return #"{"user":"# + AppTokenIssuer.jsonString(user) + #","stream":"# + AppTokenIssuer.jsonString(streamURL)
            + #","token":"# + AppTokenIssuer.jsonString(token) + #","expires":\#(expires)}"#
    }
}
