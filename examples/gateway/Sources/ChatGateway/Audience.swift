/// Who an `out` event concerns, read from its topic (`out/<subject>/<type>`).
public enum Audience: Sendable, Equatable {
    /// The members of a channel: topic `out/<cid>/…`.
    case channel(String)
    /// One user's connections: topic `out/@<user_id>/…`.
    case user(String)

    /// Reads the audience from a topic; `nil` for a topic that is not `out/<subject>/<type>`.
    ///
    /// - Parameter topic: The delivery's topic.
    public init?(topic: String) {
        guard topic.hasPrefix("out/") else { return nil }
        let rest = topic.dropFirst(4)
        guard let slash = rest.lastIndex(of: "/") else { return nil }
        let subject = rest[rest.startIndex..<slash]
        guard !subject.isEmpty else { return nil }
        if subject.first == "@" {
            let user = subject.dropFirst()
            guard !user.isEmpty else { return nil }
            self = .user(String(user))
        } else {
            self = .channel(String(subject))
        }
    }
}
