/// Which events of stage `out` one `GET /v1/stream` shows (docs/http.md, "The stream"):
///
/// - a `backend`, `subscriber` or `admin` token (or none, on an open server): every event of
///   `out`, or those whose topic starts with the `prefix` parameter;
/// - a user's app token: the events of topic `out/@USER/…` (their own devices'), and
///   `out/CID/…` for the channels the user is a member of at that point of the log, which
///   ``UserChannels`` follows from stage `in`. A `prefix` narrows that further.
public struct StreamScope: Sendable, Equatable {
    /// The user of an app token; nil for a token that sees everything.
    public let user: String?
    /// The prefix every shown topic starts with, `out/` or below.
    public let prefix: String
    /// The user's channels, as far as the log has been read.
    public private(set) var membership: UserChannels?

    /// The stage streamed.
    public static let stage = "out/"
    /// The stage membership is read from.
    public static let membershipStage = "in/"

    /// Everything under `prefix` (nil for all of `out`).
    ///
    /// - Throws: ``HTTPProblem`` 400 `bad_request` for a prefix outside `out/`.
    public init(user: String?, prefix: String?) throws(HTTPProblem) {
        let prefix = prefix ?? Self.stage
        guard prefix.hasPrefix(Self.stage) else {
            throw HTTPProblem(status: 400, code: "bad_request", detail: "prefix \(prefix): the stream is of stage out, so it starts with out/",
                              field: "prefix")
        }
        self.user = user
        self.prefix = prefix
        membership = user.map(UserChannels.init)
    }

    /// The prefixes of the stream's durable consumer: a user's stream reads `in/` too, from
    /// the start of the log, for the membership events, which `out` never delivers.
    public var consumerPrefixes: [String] { user == nil ? [prefix] : [Self.membershipStage, Self.stage] }

    /// Whether the consumer must read from the start of the log (for the membership).
    public var readsFromStart: Bool { user != nil }

    /// Takes one delivery of the consumer, in log order: a membership event of `in` changes
    /// the user's channels; the answer is whether the delivery is an event of this stream.
    public mutating func take(topic: String, event: [UInt8]) -> Bool {
        if topic.hasPrefix(Self.membershipStage) {
            if membership != nil, let type = topic.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false).dropFirst(2).first {
                membership?.apply(type: String(type), event: event)
            }
            return false
        }
        return admits(topic: topic)
    }

    /// Whether an event of `topic` is shown, with the membership as it stands.
    public func admits(topic: String) -> Bool {
        guard topic.hasPrefix(prefix) else { return false }
        guard let user else { return true }
        let parts = topic.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return false }
        let subject = parts[1]
        if subject.first == "@" { return subject.dropFirst() == user }
        return membership?.contains(String(subject)) == true
    }
}
