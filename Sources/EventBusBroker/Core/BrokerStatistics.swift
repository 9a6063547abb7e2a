import EventBus

/// Counters the broker reports in STATS.
struct BrokerStatistics {
    /// ERR replies sent, by code.
    var rejected: [ErrorCode: Int] = [:]
    /// Events not appended again because their identity was in the dedup window.
    var dedupHits = 0
    /// Events appended from a reference (`@SEQ`) rather than from bytes.
    var forwarded = 0
    /// Events appended since start, by stage.
    var published: [String: Int] = [:]
    /// `diag` events appended since start, by type (rejections, suppressions, …).
    var diagnostics: [String: Int] = [:]
    /// Live subscriptions on the stream socket.
    var streamSubscriptions = 0
    /// Replies or deliveries that could not be queued to a peer.
    var droppedReplies = 0
    /// Times a stream subscriber's queue was full: it missed that event and, until it read its queue
    /// down to the low-water mark, the ones after it (see `publishToStream`).
    var streamOverflows = 0
    /// Commands and stream subscriptions refused because the peer's role does not allow them.
    var forbidden = 0
}
