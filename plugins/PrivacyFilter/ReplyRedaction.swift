import EventBusCore

/// Picks a reply's redacted view (docs/privacy.md "How replies are redacted").
///
/// The reducer answers `channel_state` and `message_receipts` with `data`:
///
/// ```json
/// {"result": FULL,
///  "views": {"read": R, "delivery": D, "read+delivery": RD,
///            "read+reciprocity": RR, "read+delivery+reciprocity": RRD},
///  "reciprocity": {"viewer_read_receipts": false, "member_count": 2},
///  "applied": ["read"]}
/// ```
///
/// A view missing from `views` hides nobody and equals `FULL`; `applied`
/// (absent at first) lists the policies applied so far. A filter adds its
/// policy to `applied` (and, for read privacy with reciprocity on,
/// `reciprocity` when the viewer has read receipts off in a two-member
/// channel), then sets `result` to the view for the whole set, so the order of
/// the filters does not matter. Only `result` leaves the broker.
public enum ReplyRedaction {
    /// The canonical order of tokens in a view key.
    static let order = ["read", "delivery", "reciprocity"]

    /// The new `data` for a reply with views, or `nil` for a reply without
    /// (errors, `unread_counts`, other services): pass those on unchanged.
    ///
    /// - Parameters:
    ///   - data: the reply event's `data` object.
    ///   - policy: the filter's policy.
    ///   - reciprocity: whether the read filter applies reciprocity.
    public static func redact(_ data: JSONValue, policy: PrivacyPolicy, reciprocity: Bool) -> [UInt8]? {
        guard case .object(let fields) = data, case .object(let views)? = data["views"], let result = data["result"] else {
            return nil
        }
        var applied: Set<String> = []
        if case .array(let items)? = data["applied"] {
            for case .string(let token) in items { applied.insert(token) }
        }
        applied.insert(policy.token)
        if policy == .read && reciprocity, let info = data["reciprocity"], info["member_count"]?.int64Value == 2,
            info["viewer_read_receipts"] == .bool(false)
        {
            applied.insert("reciprocity")
        }
        let tokens = order.filter(applied.contains)
        let key = tokens.joined(separator: "+")
        // A view left out hides nobody: it equals the full result, and so does
        // every view of fewer policies, the result in hand included.
        let chosen = views.first { $0.key == key }?.value ?? result
        var w = JSONWriter()
        w.beginObject()
        w.key("result"); w.raw(chosen.serialized())
        for field in fields where field.key != "result" && field.key != "applied" {
            w.key(field.key); w.raw(field.value.serialized())
        }
        w.key("applied"); w.beginArray()
        for token in tokens { w.string(token) }
        w.endArray()
        w.endObject()
        return w.bytes
    }
}
