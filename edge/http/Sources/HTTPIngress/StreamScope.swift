import EventBus

/// Which events of stage `out` one `GET /v1/stream` shows (docs/http.md, "The stream"):
///
/// - a `backend`, `subscriber` or `admin` token (or none, on an open server): every event of
///   `out`, or those whose topic starts with the `prefix` parameter;
/// - a user's app token: the events of topic `out/@USER/…` (their own devices'), and
///   `out/CID/…` for the channels the user was a member of where the event was caused: at
///   the input SEQ its plugin's id names (``PluginCause``), else at its own SEQ. ``UserChannels``
///   follows the membership from stage `in`. A `prefix` narrows that further.
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

    /// Takes the delivery of SEQ `seq`, in log order: a membership event of `in` changes the
    /// user's channels; the answer is whether the delivery is an event of this stream.
    public mutating func take(topic: String, event: [UInt8], seq: UInt64) -> Bool {
        if topic.hasPrefix(Self.membershipStage) {
            if membership != nil, let type = topic.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false).dropFirst(2).first {
                membership?.apply(type: String(type), event: event, seq: seq)
            }
            return false
        }
        return admits(topic: topic, event: event, seq: seq)
    }

    /// Whether the event of `topic` and SEQ `seq` is shown: a channel's event when the user was
    /// a member where it was caused.
    ///
    /// A plugin's output is appended after the event it was made for, and other events of `in`
    /// may come in between: a `member.removed` of the user right after a message would hide
    /// the message from them, and a `member.added` right after one would show them a message
    /// sent before they joined, depending only on how fast the pipeline ran. So membership is
    /// judged at the input SEQ that the output's id names; an event that names none (not a
    /// plugin's) is judged at its own SEQ.
    public func admits(topic: String, event: [UInt8], seq: UInt64) -> Bool {
        guard topic.hasPrefix(prefix) else { return false }
        guard let user else { return true }
        let parts = topic.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return false }
        let subject = parts[1]
        if subject.first == "@" { return subject.dropFirst() == user }
        guard let membership else { return false }
        let cause = PluginCause.inputSeq(ofEvent: event).map { min($0, seq) } ?? seq
        return membership.contains(String(subject), at: cause)
    }
}
