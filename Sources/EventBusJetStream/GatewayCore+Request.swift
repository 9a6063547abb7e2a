import EventBus
import NATS

extension GatewayCore {
    /// A REQ waiting for its answer.
    struct PendingRequest {
        let peer: [UInt8]
        let correlation: [UInt8]
        let service: String
        let deadline: ContinuousClock.Instant
    }

    /// `REQ SERVICE JSON`: checked as the broker checks it, then its `query` event stored at
    /// `in` (id `query:<gateway>.<n>`); the answer comes when the pipeline's `reply` reaches
    /// `out` (``ReplyListener``), `timeout` when none came within the request timeout, `busy`
    /// when JetStream did not store the query.
    func handleRequest(_ message: CommandMessage) throws(BusError) {
        let query = try QueryRequest(message, knownServices: services)
        requestCounter += 1
        let token = "\(batchPrefix).\(requestCounter)"
        let source = "/eventbus/gateway"
        let event = query.event(token: token, source: source, time: TimeStamp.rfc3339(TimeStamp.wallMilliseconds()))
        requests[token] = PendingRequest(peer: message.peer, correlation: message.correlation, service: query.service,
                                         deadline: clock.now + config.requestTimeout)
        let inbox = self.inbox
        jetStream.publishAsync(StageStream(stage: Stage.in).subject, event,
                               messageID: MessageID.make(stage: Stage.in, source: source, id: "query:\(token)")) { result in
            if case .failure(let error) = result { inbox.post(.queryRefused(token: token, error)) }
        }
    }

    /// JetStream did not store a REQ's query: answered `busy`.
    func queryRefused(token: String, _ error: NATSError) {
        guard let request = requests.removeValue(forKey: token) else { return }
        sendError(to: request.peer, correlation: request.correlation,
                  BusError(.busy, "the query could not be stored (\(error)); send the REQ again"))
    }

    /// A `reply` or an unanswered `query` came back on this gateway's reply subject.
    func replied(_ payload: [UInt8]) {
        guard let event = try? JSONParser.parse(payload), let (token, answer) = RequestAnswer.of(event),
              let request = requests.removeValue(forKey: token) else { return }
        switch answer {
        case .result(let result): reply(to: request.peer, correlation: request.correlation, [result])
        case .failed(let error): sendError(to: request.peer, correlation: request.correlation, error)
        }
    }

    /// Answers `timeout` to the REQs whose deadline passed.
    func expireRequests() {
        let now = clock.now
        for (token, request) in requests where request.deadline <= now {
            requests.removeValue(forKey: token)
            sendError(to: request.peer, correlation: request.correlation,
                      BusError(.timeout, "service \(request.service) did not answer within \(config.requestTimeout.milliseconds) ms"))
        }
    }

    /// After JetStream acked a batch at `out`: each `reply` (and unanswered `query`) in it is
    /// published to the reply subject of the gateway that asked (the first part of its token).
    func forwardAnswers(of stored: [(subject: String, event: PublishPlan.Event)]) {
        let out = StageStream(stage: Stage.out).subject
        for (subject, event) in stored where subject == out && event.isAnswer {
            guard let parsed = try? JSONParser.parse(event.payload), let (token, _) = RequestAnswer.of(parsed),
                  let gateway = token.split(separator: ".").first, !gateway.isEmpty else { continue }
            do {
                try connection.publish(ReplyListener.subject(gateway: String(gateway)), event.payload, headers: Headers())
            } catch {
                logger.warning("an answer could not be passed to its gateway; the REQ will time out",
                               metadata: ["bus.replyto": "\(token)", "error.type": "\(error)"])
            }
        }
    }
}
