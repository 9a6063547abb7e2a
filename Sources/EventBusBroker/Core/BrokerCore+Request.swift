import EventBus

extension BrokerCore {
    /// `REQ SERVICE JSON`: log a `query` event on stage `in`, answer when its `reply` reaches `out`.
    func handleRequest(_ message: CommandMessage) throws(BusError) {
        let service = String(decoding: try argument(message, 0, "SERVICE"), as: UTF8.self)
        let request = try jsonObject(try argument(message, 1, "JSON"), frameNumber: 4, notObject: .badRequest)
        guard services.contains(service) else {
            throw BusError(.unknownService, "frame 3: no service \"\(service.prefix(64))\" (known: \(services.sorted().joined(separator: ", ")))")
        }
        guard case .string(let method)? = request["method"], !method.isEmpty else {
            throw BusError(.badRequest, "method: a non-empty string is required")
        }
        let params = request["params"] ?? .object([])
        guard case .object = params else {
            throw BusError(.badRequest, "params: must be a JSON object")
        }

        requestCounter += 1
        let token = "\(bootID).\(requestCounter)"
        let now = clock.wallMilliseconds()
        var w = JSONWriter()
        w.beginObject()
        w.key("specversion"); w.string("1.0")
        w.key("id"); w.string("query:\(token)")
        w.key("source"); w.string("/eventbus/broker")
        w.key("type"); w.string(EventType.query.rawValue)
        w.key("subject"); w.string(service)
        w.key("time"); w.string(Clock.rfc3339(now))
        w.key("replyto"); w.string(token)
        w.key("data"); w.beginObject()
        w.key("service"); w.string(service)
        w.key("method"); w.string(method)
        w.key("params"); w.raw(params.serialized())
        w.endObject()
        w.endObject()
        let event = w.bytes
        let record = PendingRecord(topic: Topic.make(stage: "in", subject: service, type: EventType.query.rawValue),
                                   source: Array("/eventbus/broker".utf8), id: Array("query:\(token)".utf8), event: event)
        _ = try append([record], timestamp: now)
        let started = clock.monotonicMilliseconds()
        requests.add(.init(peer: message.peer, correlation: message.correlation, service: service,
                           started: started, deadline: started + UInt64(config.requestTimeoutMilliseconds)),
                     token: token)
    }

    /// A `reply` reached `out`: answer the REQ named by its `replyto`.
    ///
    /// The reply's `data` is `{"result": …}` for an OK, or
    /// `{"error": {"code": …, "message": …}}` for an ERR.
    func deliverReply(_ record: RoutedRecord) {
        guard let event = try? JSONParser.parse(record.event),
              case .string(let token)? = event["replyto"] else {
            logger.warning("reply without replyto", metadata: ["bus.seq": "\(record.seq)"])
            return
        }
        // A reply to another run's request, or one that already timed out.
        guard let request = requests.remove(token) else { return }
        let data = event["data"]
        let failed: Bool
        if case .object? = data?["error"] { failed = true } else { failed = false }
        metrics.request(service: request.service, outcome: failed ? "error" : "ok",
                        milliseconds: clock.monotonicMilliseconds() - request.started)
        if failed, let error = data?["error"] {
            var code = ErrorCode.badRequest
            if case .string(let wire)? = error["code"], let known = ErrorCode(rawValue: wire) { code = known }
            var text = "the service refused the request"
            if case .string(let given)? = error["message"] { text = given }
            sendError(to: request.peer, correlation: request.correlation, BusError(code, text))
        } else {
            let result = data?["result"] ?? .object([])
            reply(to: request.peer, correlation: request.correlation, [result.serialized()])
        }
    }

    /// A `query` went through every stage unanswered: no stage serves it.
    func answerUnservedQuery(_ record: RoutedRecord) {
        guard let event = try? JSONParser.parse(record.event),
              case .string(let token)? = event["replyto"],
              let request = requests.remove(token) else { return }
        metrics.request(service: request.service, outcome: "unknown_service",
                        milliseconds: clock.monotonicMilliseconds() - request.started)
        sendError(to: request.peer, correlation: request.correlation,
                  BusError(.unknownService, "no stage of the pipeline answers service \(request.service)"))
    }
}
