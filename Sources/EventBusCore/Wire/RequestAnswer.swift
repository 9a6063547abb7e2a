/// What a `reply` (or an unanswered `query`) that reached `out` answers its REQ with.
package enum RequestAnswer: Sendable, Equatable {
    /// OK with this JSON result.
    case result([UInt8])
    /// ERR with this error.
    case failed(BusError)

    /// The token a `reply` or `query` event names in `replyto`, and its answer; nil when the
    /// event is neither or names no token. A `query` that reached `out` went through every
    /// stage unanswered: `unknown_service`.
    package static func of(_ event: JSONValue) -> (token: String, answer: RequestAnswer)? {
        guard case .string(let token)? = event["replyto"], case .string(let type)? = event["type"] else { return nil }
        if type == EventType.query.rawValue {
            var service = "?"
            if case .string(let name)? = event["data"]?["service"] { service = name }
            return (token, .failed(BusError(.unknownService, "no stage of the pipeline answers service \(service)")))
        }
        guard type == EventType.reply.rawValue else { return nil }
        let data = event["data"]
        if let error = data?["error"], case .object = error {
            var code = ErrorCode.badRequest
            if case .string(let wire)? = error["code"], let known = ErrorCode(rawValue: wire) { code = known }
            var text = "the service refused the request"
            if case .string(let given)? = error["message"] { text = given }
            return (token, .failed(BusError(code, text)))
        }
        return (token, .result((data?["result"] ?? .object([])).serialized()))
    }
}
