import EventBus

extension BrokerCore {
    /// `REQ SERVICE JSON`: log a `query` event on stage `in`, answer when its `reply` reaches `out`.
    func handleRequest(_ message: CommandMessage) throws(BusError) {
        let query = try QueryRequest(message, knownServices: services)
        requestCounter += 1
        let token = "\(bootID).\(requestCounter)"
        let now = clock.wallMilliseconds()
        let source = "/eventbus/broker"
        let event = query.event(token: token, source: source, time: Clock.rfc3339(now))
        let record = PendingRecord(topic: Topic.make(stage: "in", subject: query.service, type: EventType.query.rawValue),
                                   source: Array(source.utf8), id: Array("query:\(token)".utf8), event: event)
        _ = try append([record], timestamp: now)
        let started = clock.monotonicMilliseconds()
        requests.add(.init(peer: message.peer, correlation: message.correlation, service: query.service,
                           started: started, deadline: started + UInt64(config.requestTimeoutMilliseconds)),
                     token: token)
    }

    /// A `reply` reached `out`: answer the REQ named by its `replyto`.
    ///
    /// The reply's `data` is `{"result": …}` for an OK, or
    /// `{"error": {"code": …, "message": …}}` for an ERR (``RequestAnswer``).
    func deliverReply(_ record: RoutedRecord) {
        guard let event = try? JSONParser.parse(record.event), let (token, answer) = RequestAnswer.of(event) else {
            logger.warning("reply without replyto", metadata: ["bus.seq": "\(record.seq)"])
            return
        }
        // A reply to another run's request, or one that already timed out.
        guard let request = requests.remove(token) else { return }
        respond(request, answer)
    }

    /// A `query` went through every stage unanswered: no stage serves it.
    func answerUnservedQuery(_ record: RoutedRecord) {
        guard let event = try? JSONParser.parse(record.event), let (token, answer) = RequestAnswer.of(event),
              let request = requests.remove(token) else { return }
        respond(request, answer)
    }

    private func respond(_ request: PendingRequests.Request, _ answer: RequestAnswer) {
        let milliseconds = clock.monotonicMilliseconds() - request.started
        switch answer {
        case .result(let result):
            metrics.request(service: request.service, outcome: "ok", milliseconds: milliseconds)
            reply(to: request.peer, correlation: request.correlation, [result])
        case .failed(let error):
            metrics.request(service: request.service, outcome: error.code == .unknownService ? "unknown_service" : "error",
                            milliseconds: milliseconds)
            sendError(to: request.peer, correlation: request.correlation, error)
        }
    }
}
