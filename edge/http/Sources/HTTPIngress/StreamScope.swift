import EventBus

/// Which events of stage `out` one `GET /v1/stream` shows (docs/http.md, "The stream"):
///
/// - a `backend`, `subscriber` or `admin` token (or none, on an open server): every event of
///   `out`, or those whose topic starts with the `prefix` parameter;
/// - a user's app token: the events of topic `out/@USER/…` (their own devices'), and
///   `out/CID/…` for the channels the user was a member of where the event was caused
///   (``Verdict/ifMember(cid:cause:)``). ``UserChannels`` follows the membership from stage
///   `in`, which the stream reads with a consumer of its own. A `prefix` narrows that further.
public struct StreamScope: Sendable, Equatable {
    /// The user of an app token; nil for a token that sees everything.
    public let user: String?
    /// The prefix every shown topic starts with, `out/` or below: the prefix of the stream's
    /// consumer.
    public let prefix: String

    /// The stage streamed.
    public static let stage = "out/"
    /// The stage membership is read from.
    public static let membershipStage = "in/"

    /// Whether an event of `out` is shown.
    public enum Verdict: Sendable, Equatable {
        case hidden
        case shown
        /// An event of channel `cid`: shown if the user was a member of it once the events of
        /// `in` up to SEQ `cause` were applied; for a `nil` cause, as far as `in` has been read.
        case ifMember(cid: String, cause: UInt64?)
    }

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
    }

    /// Whether the stream reads `in` too, from the start of the log, for the membership events
    /// (`out` never delivers them): a user's stream does.
    public var readsMembership: Bool { user != nil }

    /// Judges an event of `out`.
    ///
    /// A plugin's output is appended after the event it was made for, and other events of `in`
    /// may come in between: a `member.removed` of the user right after a message would hide
    /// the message from them, and a `member.added` right after one would show them a message
    /// sent before they joined, depending only on how fast the pipeline ran. So an output of
    /// `firstPlugin`, the plugin that reads `in` (HELLO's second stage), is judged at the SEQ
    /// of `in` that its id names (``PluginCause``). Any other event of a channel names no SEQ
    /// of `in` (another plugin's id names a SEQ of the stage it reads, which on a cluster has
    /// a sequence of its own) and is judged by the membership as far as it has been read.
    public func verdict(topic: String, event: [UInt8], firstPlugin: String?) -> Verdict {
        guard topic.hasPrefix(prefix) else { return .hidden }
        guard let user else { return .shown }
        let parts = topic.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .hidden }
        let subject = parts[1]
        if subject.first == "@" { return subject.dropFirst() == user ? .shown : .hidden }
        var cause: UInt64?
        if let firstPlugin, let origin = PluginCause(event: event), origin.plugin == firstPlugin { cause = origin.inputSeq }
        return .ifMember(cid: String(subject), cause: cause)
    }

    /// The plugin that reads `in`, from HELLO's `stages` (`in`, the pipeline's, `out`, `diag`):
    /// `nil` for a pipeline without plugins.
    public static func firstPlugin(stages: [String]) -> String? {
        guard stages.count > 1, stages[0] == "in", stages[1] != "out", stages[1] != "diag" else { return nil }
        return stages[1]
    }
}
