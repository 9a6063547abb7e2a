import EventBus
import Foundation
import NATS

extension GatewayCore {
    /// Handles one message from the ROUTER: framing as the broker checks it, with keys the
    /// sender's roles (by its ZAP user id), then the verb.
    func handle(_ frames: [[UInt8]], userID: String? = nil) {
        let parsed: CommandMessage
        do {
            parsed = try CommandMessage.parse(frames)
        } catch {
            if !error.peer.isEmpty { sendError(to: error.peer, correlation: error.correlation, error.error) }
            return
        }
        do throws(BusError) {
            try access?.authorize(parsed, userID: userID)
            let message = try parsed.unbatched()
            switch message.verb {
            case .ping: reply(to: message.peer, correlation: message.correlation, [])
            case .hello: try handleHello(message)
            case .pub: try handlePub(message)
            case .consume: try handleConsume(message, client: userID)
            case .ack: try handleAck(message)
            case .cancel: try handleCancel(message)
            case .stats: handleStats(message)
            case .req: try handleRequest(message)
            case .pubs, .ok, .err, .evt, .evts, .end:
                throw BusError(.badVerb, "frame 1: \(message.verb.rawValue) is not a request")
            }
        } catch {
            sendError(to: parsed.peer, correlation: parsed.correlation, error)
        }
    }

    /// Adds `peer` to `peers` (`on`) or removes it. ZeroMQ never says a peer left: the set
    /// is bounded as the broker bounds its own.
    private static func remember(_ peer: [UInt8], _ on: Bool, in peers: inout Set<[UInt8]>) {
        if on {
            if peers.count >= 10_000 { peers.removeAll() }
            peers.insert(peer)
        } else {
            peers.remove(peer)
        }
    }

    /// HELLO: the gateway's stages, limits and features; records `batch` (for the peer's
    /// next CONSUME) and `compact_ok` (for its next PUB). `ordered` is checked and answered
    /// `true` whatever was asked: every connection's PUBs are ordered (``OrderedPublisher``).
    private func handleHello(_ message: CommandMessage) throws(BusError) {
        let hello = try HelloRequest(message)
        if let declared = hello.services { services.formUnion(declared) }
        if let on = hello.batch { Self.remember(message.peer, on, in: &batchPeers) }
        if let on = hello.compactOK { Self.remember(message.peer, on, in: &compactPeers) }
        var w = JSONWriter()
        w.beginObject()
        w.key("protocol"); w.string("EB1")
        w.key("backend"); w.string("jetstream")
        w.key("stages"); w.beginArray(); for stage in config.stages { w.string(stage) }; w.endArray()
        w.key("services"); w.beginArray(); for service in services.sorted() { w.string(service) }; w.endArray()
        w.key("features"); w.beginArray(); w.string("batch"); w.string("compact_ok"); w.string("ordered"); w.string("pubs"); w.endArray()
        w.key("batch"); w.bool(batchPeers.contains(message.peer))
        w.key("compact_ok"); w.bool(compactPeers.contains(message.peer))
        w.key("ordered"); w.bool(true)
        w.key("limits"); w.beginObject()
        w.key("max_event_bytes"); w.int(config.maxEventBytes)
        w.key("max_batch_events"); w.int(WireProtocol.maxBatchEvents)
        w.key("max_batch_bytes"); w.int(WireProtocol.maxBatchBytes)
        w.key("max_credit"); w.int(WireProtocol.maxCredit)
        w.key("request_timeout_ms"); w.int(config.requestTimeout.milliseconds)
        w.endObject()
        w.endObject()
        reply(to: message.peer, correlation: message.correlation, [w.bytes])
    }

    /// STATS: the loop's figures now, the cluster's (events per stage, each consumer's ack
    /// floor) asked on a thread of its own, since each is a JetStream request; the reply goes
    /// from the loop once they came (``GatewayInbox/Event/statsReady(_:)``). One such thread
    /// at a time (``StatsGathering``): a flood of STATS starts no flood of threads.
    func handleStats(_ message: CommandMessage) {
        switch statsGathering.asked(.init(peer: message.peer, correlation: message.correlation)) {
        case .start: startStatsGathering()
        case .wait: break
        case .refuse:
            sendError(to: message.peer, correlation: message.correlation,
                      BusError(.busy, "\(StatsGathering.maxWaiting) STATS already wait for this gateway's figures; retry later"))
        }
    }

    /// The loop's figures now, then a thread that adds the cluster's and posts the reply.
    func startStatsGathering() {
        let attached = consumers.sorted { $0.key < $1.key }
        let snapshot = GatewayStats(
            servers: config.servers.map { ServerURL.redacted($0) }, connectedURL: connection.connectedURL.map { ServerURL.redacted($0) },
            replicas: config.replicas, eventsInFlight: publisher.eventsInFlight, batchesSent: publisher.flightsStarted,
            pubsBatched: publisher.pubsInFlights, pendingRequests: requests.count,
            stages: config.stages.map { GatewayStats.Stage(name: $0) },
            consumers: attached.map { name, attachment in
                GatewayStats.Consumer(name: name, stage: attachment.request.stage,
                                      prefixes: attachment.request.prefixes.map { String(decoding: $0, as: UTF8.self) },
                                      inFlight: attachment.window.count, credit: attachment.request.credit, client: attachment.client)
            })
        let durables = attached.map { DurableName.make($0.key) }
        let (jetStream, inbox) = (jetStream, inbox)
        let thread = Thread {
            var stats = snapshot
            for index in stats.stages.indices {
                let info = try? jetStream.streamInfo(StageStream(stage: stats.stages[index].name).name)
                stats.stages[index].messages = info?.messages
                stats.stages[index].lastSequence = info?.lastSequence
            }
            for index in stats.consumers.indices {
                let stream = StageStream(stage: stats.consumers[index].stage).name
                stats.consumers[index].acked = (try? jetStream.consumerInfo(stream: stream, durable: durables[index]))?.ackFloorStreamSequence
            }
            inbox.post(.statsReady(stats.json))
        }
        thread.name = "eventbus-gateway-stats"
        thread.start()
    }

    /// A gathering's reply, to every STATS it answers; the next starts for those that waited.
    func statsReady(_ json: [UInt8]) {
        let (answer, startAnother) = statsGathering.finished()
        for requester in answer { reply(to: requester.peer, correlation: requester.correlation, [json]) }
        if startAnother { startStatsGathering() }
    }

    /// Everything the inbox holds, in order.
    func handleInbox() {
        for event in inbox.take() {
            switch event {
            case .batchAnswered(let flight, let attempt, let result): batchAnswered(flight, attempt, result)
            case .attached(let token, let first, let made): attached(token: token, first: first, made: made)
            case .attachFailed(let token, let error): attachFailed(token: token, error)
            case .fetched(let token, let messages): fetched(token: token, messages)
            case .queryRefused(let token, let error): queryRefused(token: token, error)
            case .replied(let payload): replied(payload)
            case .statsReady(let json): statsReady(json)
            case .replyListenerFailed(let error):
                logger.warning("reading the reply subject failed; retrying", metadata: ["error.type": "\(error)"])
            case .fetchFailed(let token, let error):
                logger.warning("fetch failed; retrying", metadata: ["bus.consumer_token": "\(token)", "error.type": "\(error)"])
            }
        }
    }
}
