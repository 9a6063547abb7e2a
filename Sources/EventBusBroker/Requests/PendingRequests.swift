/// REQs waiting for their `reply` event, by `replyto` token.
struct PendingRequests {
    struct Request {
        let peer: [UInt8]
        let correlation: [UInt8]
        let service: String
        /// When the REQ arrived (monotonic ms).
        let started: UInt64
        let deadline: UInt64
    }

    private var byToken: [String: Request] = [:]

    var count: Int { byToken.count }

    mutating func add(_ request: Request, token: String) { byToken[token] = request }

    mutating func remove(_ token: String) -> Request? { byToken.removeValue(forKey: token) }

    /// Removes and returns the requests whose deadline is at or before `now`.
    mutating func expire(now: UInt64) -> [Request] {
        guard !byToken.isEmpty else { return [] }
        let expired = byToken.filter { $0.value.deadline <= now }
        for token in expired.keys { byToken[token] = nil }
        return Array(expired.values)
    }

    /// The earliest deadline, if any request waits.
    var nextDeadline: UInt64? { byToken.values.map(\.deadline).min() }
}
