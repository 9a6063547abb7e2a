import CoreMetrics
import EventBusCore
import Logging

/// A privacy filter plugin (`read-privacy` or `delivery-privacy`), placed after
/// the reducer (docs/privacy.md "Rules").
///
/// It sees every event of its input stage in log order and:
/// - keeps the settings of `user.updated` and `channel_type.updated` (passing them on);
/// - suppresses its policy's receipt event (`message.read` or
///   `message.delivered`) when the user's setting or the channel type's toggle
///   is off at that SEQ, recording a `receipt.suppressed` audit event on `diag`
///   (`{seq, type, reason, policy}`, nothing of the payload);
/// - replaces a `receipts` reply's result with the view that redacts its
///   policy (``ReplyRedaction``);
/// - with reciprocity (read privacy only), also suppresses a `message.read` in
///   a channel of exactly two members when the other member has read receipts
///   off: that member is its only audience (it tracks membership for this);
/// - puts the count of its policy on `message.read` and `message.delivered` as
///   others may see it (``CountRedaction``);
/// - passes everything else on unchanged, self-addressed `notification.*` included.
///
/// A filter that is down holds everything back (the events wait in the log):
/// it fails closed.
public struct PrivacyFilter: Plugin {
    /// What this filter withholds.
    public let policy: PrivacyPolicy
    /// Whether read privacy applies reciprocity in one-to-one channels.
    public let reciprocity: Bool
    /// The plugin name (the policy's name).
    public var name: String { policy.name }
    private let reporter: SuppressionReporter
    /// `eventbus_privacy_suppressed_total{policy, reason}` (swift-metrics).
    private let suppressions: [SuppressionReason: Counter]

    /// A filter for `policy`.
    ///
    /// - Parameters:
    ///   - policy: read or delivery privacy.
    ///   - reciprocity: for read privacy, a viewer with read receipts off sees
    ///     nobody's read receipts in channels of exactly two members.
    ///   - logger: where the suppression counts are logged now and then.
    public init(policy: PrivacyPolicy, reciprocity: Bool = false, logger: Logger? = nil) {
        self.policy = policy
        self.reciprocity = reciprocity && policy == .read
        reporter = SuppressionReporter(policy: policy, logger: logger ?? Logger(label: "eventbus.plugin.\(policy.name)"))
        suppressions = Dictionary(uniqueKeysWithValues: SuppressionReason.allCases.map { reason in
            (reason, Counter(label: "eventbus_privacy_suppressed_total",
                             dimensions: [("policy", policy.name), ("reason", reason.rawValue)]))
        })
    }

    /// Starts with everything enabled.
    public func initialState() -> PrivacySettings { PrivacySettings() }

    /// The members of an ack's `data` a filter judges it by.
    static let judgedMembers = JSONScanner.Keys(["user_id", "cid"])

    /// Handles one event in log order (see the type's discussion).
    public func handle(_ event: PluginEvent, state: inout PrivacySettings, output: inout PluginOutput) throws {
        defer { reporter.note(state.suppressed) }
        switch event.knownType {
        case .userUpdated?, .channelTypeUpdated?:
            if let (_, payload) = try event.ingress() { state.apply(payload) }
            output.pass(event)
        case .channelCreated?, .memberAdded?, .memberRemoved?, .channelDeleted?, .userDeleted?:
            if reciprocity, let (_, payload) = try event.ingress() { state.applyMembership(payload) }
            output.pass(event)
        case policy.eventType? where !event.subject.hasPrefix("@"):
            // The broker checked the envelope when it logged the event: only `data` is read here.
            let strings = try event.loggedDataStrings(Self.judgedMembers)
            guard let userID = strings[0], let cid = strings[1] else {
                // Cannot judge it: stop rather than let it through (the supervisor restarts us).
                throw PluginError("\(policy.name): \(event.type) at SEQ \(event.seq) has no user_id or cid")
            }
            // Reciprocity (WhatsApp's rule): in a one-to-one channel, a reader whose
            // only audience turned read receipts off does not show reads to them.
            let reciprocal: SuppressionReason? = reciprocity
                && state.otherMember(of: cid, than: userID).map({ state.flags(ofUser: $0).contains(policy.flag) }) == true
                ? .userSetting : nil
            guard let reason = state.suppression(policy, userID: userID, cid: cid) ?? reciprocal else {
                try passRedacting(event, &output)
                return
            }
            state.count(reason)
            suppressions[reason]?.increment()
            output.emit(type: EventType.receiptSuppressed.rawValue, subject: String(event.subject),
                        data: Self.auditRecord(seq: event.seq, type: String(event.type), reason: reason, policy: policy),
                        time: try event.envelope().time, to: .diag)
        case .messageRead? where !event.subject.hasPrefix("@"), .messageDelivered? where !event.subject.hasPrefix("@"):
            // The other policy's receipt event: only its count of this policy.
            try passRedacting(event, &output)
        case .reply?:
            guard let reply = QueryReply(event),
                let data = ReplyRedaction.redact(reply.data, policy: policy, reciprocity: reciprocity)
            else {
                output.pass(event)
                return
            }
            output.reply(replacing: reply, data: data)
        default:
            output.pass(event)
        }
    }

    /// Passes a receipt event on with this policy's count as others may see it
    /// (``CountRedaction``), or unchanged when the reducer redacted nothing of it.
    private func passRedacting(_ event: PluginEvent, _ output: inout PluginOutput) throws {
        guard let data = try CountRedaction.redact(event.bytes, policy: policy) else {
            output.pass(event)
            return
        }
        try output.pass(event, data: data)
    }

    /// The `receipt.suppressed` data: `{seq, type, reason, policy}`.
    static func auditRecord(seq: UInt64, type: String, reason: SuppressionReason, policy: PrivacyPolicy) -> [UInt8] {
        var w = JSONWriter(capacity: 96)
        w.beginObject()
        w.key("seq"); w.uint(seq)
        w.key("type"); w.string(type)
        w.key("reason"); w.string(reason.rawValue)
        w.key("policy"); w.string(policy.name)
        w.endObject()
        return w.bytes
    }
}
