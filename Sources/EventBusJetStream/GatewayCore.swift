import EventBus
import EventBusBroker
import Foundation
import Logging
import NATS
import ZeroMQ

/// The gateway's state and its poll loop, owned by the thread in ``Gateway/run()``.
///
/// One pass reads the commands waiting on the ROUTER (unless ``GatewayConfig/maxEventsInFlight``
/// events wait for acks), then everything the inbox holds — publish acks, consumers set
/// up, messages fetched — and then fails the PUBs whose deadline passed.
final class GatewayCore {
    let config: GatewayConfig
    let logger: Logger
    let context: Context
    let router: Socket
    let connection: Connection
    let jetStream: JetStream
    let inbox: GatewayInbox
    /// The PUBs on their way, one atomic batch each, one at a time per peer.
    var publisher: OrderedPublisher
    /// What each PUB not answered yet publishes, by job.
    var outgoing: [OrderedPublisher.JobID: Outgoing] = [:]
    /// Makes each batch id unique across gateways: `<this>-<job>-<attempt>`.
    let batchPrefix = String(UInt64.random(in: 0...UInt64.max), radix: 36)
    /// Peers that asked for compact confirms in HELLO.
    var compactPeers: Set<[UInt8]> = []
    /// Peers that asked for batched delivery (EVTS) in HELLO.
    var batchPeers: Set<[UInt8]> = []
    /// Attached consumers by EB1 NAME.
    var consumers: [String: Attachment] = [:]
    /// The last fetch worker made for each NAME whose thread may still run, attached or
    /// detached: the next attach of that NAME waits for it.
    var workers: [String: FetchWorker] = [:]
    var nextToken: UInt64 = 1
    let clock = ContinuousClock()
    /// The services a REQ may name: configured, plus those declared in HELLO here.
    var services: Set<String>
    /// When the EVTs held by clients were last marked in progress (``keepHeldAlive()``).
    var lastKeepAlive = ContinuousClock.now
    /// REQs waiting for their answer, by token (`<batchPrefix>.<n>`).
    var requests: [String: PendingRequest] = [:]
    var requestCounter: UInt64 = 0
    /// The STATS waiting for the cluster's figures (one gathering thread at a time).
    var statsGathering = StatsGathering()
    /// Reads the answers to this gateway's REQs.
    var replyListener: ReplyListener?
    /// With keys: who may do what, and the handler that admits listed keys.
    let access: BrokerAccess?
    var zap: ZAPHandler?

    /// A PUB's messages, kept until it is answered to be published again if need be.
    struct Outgoing {
        let subject: String
        let events: [PublishPlan.Event]
    }

    /// One consumer attached to one peer.
    final class Attachment {
        let request: ConsumeRequest
        let peer: [UInt8]
        let correlation: [UInt8]
        /// Replaced when the consumer is made again after a gap.
        var worker: FetchWorker
        var window: DeliveryWindow<JetStreamMessage>
        /// Whether its OK went out (EVTs only after it).
        var confirmed = false
        /// Whether its peer had asked for batched delivery when it attached: EVTS, not EVT.
        let batched: Bool
        /// With keys, the name its peer was admitted as (ZAP user id).
        let client: String?

        init(request: ConsumeRequest, peer: [UInt8], correlation: [UInt8], worker: FetchWorker, batched: Bool, client: String? = nil) {
            self.request = request
            self.peer = peer
            self.correlation = correlation
            self.worker = worker
            self.batched = batched
            self.client = client
            self.window = DeliveryWindow(credit: request.credit)
        }
    }

    init(config: GatewayConfig, logger: Logger) throws(GatewayError) {
        self.config = config
        self.logger = logger
        self.services = Set(config.services)
        access = config.security.map { BrokerAccess(config: $0, pipeline: config.pipeline) }
        self.publisher = OrderedPublisher(timeout: config.publishTimeout, fenceDuration: config.orderFence)
        do {
            connection = try Connection(ConnectOptions(
                servers: config.servers, name: config.connectionName, timeout: .seconds(2),
                allowReconnect: true, maxReconnect: -1, reconnectWait: .seconds(1),
                trustedCertificates: config.trustedCertificates))
        } catch {
            throw .unreachable(servers: config.servers, error)
        }
        do {
            jetStream = try JetStream(connection: connection, options: JetStreamOptions(
                requestTimeout: config.requestTimeout, asyncAckTimeout: config.publishTimeout,
                maxPendingAsync: config.maxEventsInFlight + WireProtocol.maxBatchEvents))
        } catch {
            throw .unreachable(servers: config.servers, error)
        }
        for stage in config.stages {
            try Self.ensureStream(StageStream(stage: stage), config: config, jetStream: jetStream, logger: logger)
        }
        do {
            inbox = try GatewayInbox()
            context = try Context()
            router = try Socket(context: context, type: .router)
            if let security = config.security {
                // The ZAP handler must be bound before a CURVE socket accepts a peer.
                zap = try ZAPHandler(context: context, clients: security.clients, logger: logger)
                try router.makeCurveServer(secretKey: security.secretKey)
                try router.setZAPDomain("eventbus")
            }
            try router.setRouterMandatory(true)
            // As the broker's --peer-hwm: a consumer's whole CREDIT of EVTs (65,536 at most)
            // fits in its peer's queue; libzmq's default (1,000) made EVTs beyond it drop.
            try router.setSendHighWaterMark(100_000)
            try router.setReceiveHighWaterMark(100_000)
            try router.setMaxMessageSize(Int64(8 * 1024 * 1024))
            try router.setLinger(0)
            try router.bind(config.commandEndpoint)
        } catch {
            throw .cannotBind(endpoint: config.commandEndpoint, "\(error)")
        }
        do {
            replyListener = try ReplyListener(connection: connection, gateway: batchPrefix, inbox: inbox)
        } catch {
            throw .unreachable(servers: config.servers, error)
        }
        logger.info("gateway serving", metadata: [
            "bus.command": "\(commandEndpoint)", "nats.servers": "\(ServerURL.redacted(config.servers))",
            "nats.replicas": "\(config.replicas)", "bus.stages": "\(config.stages.joined(separator: ","))",
        ])
    }

    var commandEndpoint: String { (try? router.lastEndpoint) ?? config.commandEndpoint }

    /// Makes the stage's stream when it is missing (one that exists is used as it is), and
    /// makes it accept atomic batches (`allow_atomic`, set through the JSON API). Each call
    /// is tried again with short waits (``ClusterWarmUp/retry(_:on:wait:notFound:logger:_:)``),
    /// so that a gateway started during an election serves soon after it.
    static func ensureStream(_ stream: StageStream, config: GatewayConfig, jetStream: JetStream,
                             logger: Logger) throws(GatewayError) {
        do {
            let info = try ClusterWarmUp.retry("stream info \(stream.name)", on: jetStream, wait: config.peerWait, logger: logger) {
                context throws(NATSError) in try context.streamInfo(stream.name)
            }
            if info.config.replicas != config.replicas {
                logger.warning("stream exists with another replica count; used as it is", metadata: [
                    "nats.stream": "\(stream.name)", "nats.replicas": "\(info.config.replicas)",
                ])
            }
        } catch where error.isNotFound {
            try addStream(stream, config: config, jetStream: jetStream, logger: logger)
        } catch {
            throw .streamUnavailable(stream: stream.name, servers: config.servers, error)
        }
        do {
            // The stream exists by now (found, or added here or by a gateway beside this one):
            // "not found" is a replica that does not know it yet.
            let changed = try ClusterWarmUp.retry("allow atomic batches on \(stream.name)", on: jetStream, wait: config.peerWait,
                                                  notFound: true, logger: logger) { context throws(NATSError) in
                try context.allowAtomicPublish(stream: stream.name)
            }
            if changed {
                logger.info("stream accepts atomic batches now", metadata: ["nats.stream": "\(stream.name)"])
            }
        } catch {
            throw .streamUnavailable(stream: stream.name, servers: config.servers, error)
        }
    }

    /// Adds the stage's stream. A cluster that just started may not know all its peers are
    /// up yet ("no suitable peers for placement"), or answer only after the new stream's
    /// first election: such answers, and timeouts, are retried for up to `config.peerWait`
    /// (``ClusterWarmUp``; adding a stream again with the same configuration is harmless),
    /// the others fail at once.
    static func addStream(_ stream: StageStream, config: GatewayConfig, jetStream: JetStream,
                          logger: Logger) throws(GatewayError) {
        do {
            _ = try ClusterWarmUp.retry("add stream \(stream.name)", on: jetStream, wait: config.peerWait, logger: logger) {
                context throws(NATSError) in
                try context.addStream(stream.config(replicas: config.replicas, duplicateWindow: config.duplicateWindow))
            }
            logger.info("stream created", metadata: ["nats.stream": "\(stream.name)", "nats.replicas": "\(config.replicas)"])
        } catch where error.isStreamNameInUse {
            // Another gateway starting beside this one made it (and may have changed it since:
            // atomic batches allowed): used as it is.
            logger.info("stream made meanwhile by another gateway", metadata: ["nats.stream": "\(stream.name)"])
        } catch {
            throw .streamUnavailable(stream: stream.name, servers: config.servers, error)
        }
    }

    // MARK: The loop

    func run(until stopped: () -> Bool) {
        var withCommands = Poller()
        withCommands.add(router)
        withCommands.add(fileDescriptor: inbox.wakeup.fileDescriptor)
        var inboxOnly = Poller()
        inboxOnly.add(fileDescriptor: inbox.wakeup.fileDescriptor)
        // Handshakes are answered whether commands are read or not: the last item of both.
        if let zap {
            withCommands.add(zap.socket)
            inboxOnly.add(zap.socket)
        }
        while !stopped() {
            let accepting = publisher.eventsInFlight < config.maxEventsInFlight
            do {
                let ready: [Poller.Events]
                if accepting {
                    ready = try withCommands.poll(timeoutMilliseconds: pollTimeout())
                    if ready[0].contains(.readable) { readCommands() }
                } else {
                    ready = try inboxOnly.poll(timeoutMilliseconds: pollTimeout())
                }
                if let zap, ready.last?.contains(.readable) == true { zap.drain() }
            } catch {
                logger.error("poll failed", metadata: ["error.type": "\(error)"])
                break
            }
            handleInbox()
            tick()
        }
        shutDown()
    }

    /// Until the next PUB deadline or retry, at most 100 ms.
    private func pollTimeout() -> Int {
        guard let deadline = publisher.nextWakeup else { return 100 }
        let left = clock.now.duration(to: deadline)
        return max(0, min(100, Int(left.milliseconds) + 1))
    }

    private func readCommands() {
        for _ in 0..<1_000 {
            let received: (frames: [[UInt8]], userID: String?)?
            do {
                received = access == nil ? try router.receive(dontWait: true).map { ($0, nil) }
                    : try router.receiveWithUserID(dontWait: true)
            } catch {
                logger.warning("receive failed", metadata: ["error.type": "\(error)"])
                return
            }
            guard let received else { return }
            handle(received.frames, userID: received.userID)
            if publisher.eventsInFlight >= config.maxEventsInFlight { return }
        }
    }

    /// Stops reading commands, waits for the PUBs in flight to be answered (at most their
    /// deadline), gives every consumer's unacked events back, and closes.
    private func shutDown() {
        while publisher.jobCount > 0 {
            var poller = Poller()
            poller.add(fileDescriptor: inbox.wakeup.fileDescriptor)
            _ = try? poller.poll(timeoutMilliseconds: pollTimeout())
            handleInbox()
            tick()
        }
        for name in Array(consumers.keys) { detach(name) }
        replyListener?.stop()
        router.close()
        zap?.socket.close()
        connection.close()
        logger.info("gateway stopped")
    }

    // MARK: Replies

    func reply(to peer: [UInt8], correlation: [UInt8], _ frames: [[UInt8]]) {
        _ = send(to: peer, [WireProtocol.signature, Verb.ok.bytes, correlation] + frames)
    }

    func sendError(to peer: [UInt8], correlation: [UInt8], _ error: BusError) {
        _ = send(to: peer, [WireProtocol.signature, Verb.err.bytes, correlation, Array(error.code.wire.utf8), Array(error.message.utf8)])
    }

    /// Sends without waiting; `false` when the peer is gone or its queue is full.
    @discardableResult
    func send(to peer: [UInt8], _ frames: [[UInt8]]) -> Bool {
        do {
            if try router.send(peer, frames, dontWait: true) { return true }
            logger.warning("peer's queue is full; message dropped", metadata: ["bus.verb": "\(String(decoding: frames[1], as: UTF8.self))"])
            return false
        } catch {
            logger.debug("peer gone", metadata: ["error.type": "\(error)"])
            return false
        }
    }
}
