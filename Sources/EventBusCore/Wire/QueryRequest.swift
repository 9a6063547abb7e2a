/// A `REQ SERVICE JSON` (docs/protocol.md, "REQ") checked, and the `query` event that
/// carries it through the pipeline: one shape for every front that routes queries (the
/// broker, the JetStream gateway).
package struct QueryRequest: Sendable, Equatable {
    package let service: String
    package let method: String
    /// The request's `params`, an object (`{}` when absent).
    package let params: JSONValue

    /// Checks a REQ's arguments in the order the contract gives its errors: SERVICE and
    /// JSON present (`bad_frame`), JSON an object (`bad_json`, `bad_request`), the service
    /// known (`unknown_service`), `method` a non-empty string, `params` an object.
    package init(_ message: CommandMessage, knownServices: Set<String>) throws(BusError) {
        let arguments = message.arguments
        guard arguments.count >= 1 else { throw BusError(.badFrame, "REQ: frame 3 (SERVICE) is missing") }
        guard arguments.count >= 2 else { throw BusError(.badFrame, "REQ: frame 4 (JSON) is missing") }
        let service = String(decoding: arguments[arguments.startIndex], as: UTF8.self)
        let request: JSONValue
        do { request = try JSONParser.parse(arguments[arguments.startIndex + 1]) } catch {
            throw BusError(.badJSON, "frame 4: \(error)")
        }
        guard case .object = request else { throw BusError(.badRequest, "frame 4: must be a JSON object") }
        guard knownServices.contains(service) else {
            throw BusError(.unknownService, "frame 3: no service \"\(service.prefix(64))\" (known: \(knownServices.sorted().joined(separator: ", ")))")
        }
        guard case .string(let method)? = request["method"], !method.isEmpty else {
            throw BusError(.badRequest, "method: a non-empty string is required")
        }
        let params = request["params"] ?? .object([])
        guard case .object = params else { throw BusError(.badRequest, "params: must be a JSON object") }
        self.service = service
        self.method = method
        self.params = params
    }

    /// The `query` event for stage `in`: id `query:TOKEN`, `replyto` TOKEN, from `source`.
    package func event(token: String, source: String, time: String) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("specversion"); w.string("1.0")
        w.key("id"); w.string("query:\(token)")
        w.key("source"); w.string(source)
        w.key("type"); w.string(EventType.query.rawValue)
        w.key("subject"); w.string(service)
        w.key("time"); w.string(time)
        w.key("replyto"); w.string(token)
        w.key("data"); w.beginObject()
        w.key("service"); w.string(service)
        w.key("method"); w.string(method)
        w.key("params"); w.raw(params.serialized())
        w.endObject()
        w.endObject()
        return w.bytes
    }
}
