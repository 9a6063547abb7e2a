import EventBusCore

/// A `receipts` reply as the reducer prepares it for the privacy filters after it.
///
/// ``result`` is the full, unredacted reply (what a pipeline without filters
/// returns). For `channel_state` and `message_receipts`, ``views`` holds the
/// same reply computed for the query's viewer with the members hidden by a
/// set of policies redacted, keyed `read`, `delivery`, `read+delivery` and,
/// in a one-to-one channel whose viewer has read receipts off,
/// `read+reciprocity` and `read+delivery+reciprocity`. A view in which
/// nothing is hidden is identical to ``result`` and left out.
public struct QueryAnswer: Sendable {
    /// The full reply's result object (JSON bytes).
    public var result: [UInt8]
    /// The redacted views that differ from ``result``, by key, in key order;
    /// `nil` for a method that has no viewer (`unread_counts`).
    public var views: [(key: String, result: [UInt8])]?
    /// Whether the viewer has read receipts on (reciprocity), with views only.
    public var viewerReadReceipts = true
    /// The channel's current member count (reciprocity), with views only.
    public var memberCount = 0

    /// The reply event's `data`: `{"result": R}` or, with views,
    /// `{"result": R, "views": {KEY: VIEW…}, "reciprocity": {"viewer_read_receipts": B, "member_count": N}}`.
    public var data: [UInt8] {
        var w = JSONWriter(capacity: result.count + (views?.reduce(0) { $0 + $1.result.count + 32 } ?? 0) + 96)
        w.beginObject()
        w.key("result"); w.raw(result)
        if let views {
            w.key("views")
            w.beginObject()
            for view in views { w.key(view.key); w.raw(view.result) }
            w.endObject()
            w.key("reciprocity")
            w.beginObject()
            w.key("viewer_read_receipts"); w.bool(viewerReadReceipts)
            w.key("member_count"); w.int(memberCount)
            w.endObject()
        }
        w.endObject()
        return w.bytes
    }
}
