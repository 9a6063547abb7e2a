import EventBusCore

/// A `receipts` query the campaign asked once the round had caught up, and the answer it got.
public struct QueryProbe: Sendable, Equatable {
    public let method: String
    public let params: JSONValue
    /// The REQ's `OK` JSON (the service's `result`) or the `error` object.
    public let answer: JSONValue

    public init(method: String, params: JSONValue, answer: JSONValue) {
        self.method = method
        self.params = params
        self.answer = answer
    }
}
