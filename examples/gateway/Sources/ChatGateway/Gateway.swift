import EventBus
import Logging
import Synchronization

/// The gateway's core: consumes `in` (membership) and `out` durably and routes each `out`
/// event to the connections it concerns; replays what a reconnecting client missed.
///
/// It knows nothing of websockets: ``connect(userID:lastSeq:)`` returns a ``Connection``
/// whose ``Connection/frames`` the transport writes out.
public final class Gateway: Sendable {
    /// The configuration.
    public let config: GatewayConfig
    /// The connections.
    public let hub = Hub()
    /// The membership view.
    public let membership: Membership
    private let client: BusClient
    private let replayNames: ReplayNames
    private let nextID = Atomic<UInt64>(1)
    private let logger: Logger

    /// Creates a gateway that reads the bus through `client`.
    ///
    /// - Parameters:
    ///   - client: The bus connection.
    ///   - config: Names and bounds.
    ///   - membership: Where channel membership comes from; by default the reducer's `channel_state`.
    ///   - logger: Where the gateway logs.
    public init(client: BusClient, config: GatewayConfig = .init(), membership: Membership? = nil, logger: Logger = Logger(label: "chat-gateway")) {
        self.client = client
        self.config = config
        self.membership = membership ?? Membership(source: ReceiptsMembershipSource(client: client), logger: logger)
        self.replayNames = ReplayNames(consumer: config.consumer, count: config.replayConcurrency)
        self.logger = logger
    }

    /// Consumes the bus until the task is cancelled, attaching again after a takeover or a failure.
    public func run() async {
        while !Task.isCancelled {
            do {
                let consumer = try await client.consume(
                    name: config.consumer, start: .resume, credit: config.credit, prefixes: ["in/", "out/"])
                logger.info("consuming", metadata: ["bus.consumer": "\(config.consumer)", "bus.first_seq": "\(consumer.firstSeq)"])
                try await withTaskCancellationHandler {
                    for try await delivery in consumer {
                        await handle(delivery)
                        consumer.ack(delivery.seq)
                    }
                } onCancel: {
                    Task { try? await consumer.cancel() }
                }
                if let reason = consumer.endReason {
                    logger.warning("consumer ended by the broker", metadata: ["bus.reason": "\(reason)"])
                }
            } catch {
                logger.warning("consumer failed; attaching again", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
    }

    /// Routes one event of the durable consumer.
    func handle(_ delivery: Delivery) async {
        if delivery.topic.hasPrefix("in/") {
            await membership.apply(event: delivery.event)
            return
        }
        switch Audience(topic: delivery.topic) {
        case .user(let user):
            hub.route(delivery, to: CollectionOfOne(user))
        case .channel(let cid):
            hub.route(delivery, to: await membership.members(of: cid))
        case nil:
            hub.route(delivery, to: EmptyCollection())
        }
    }

    /// Whether `delivery` (an `out` event) concerns `user`.
    func concerns(_ delivery: Delivery, user: String) async -> Bool {
        switch Audience(topic: delivery.topic) {
        case .user(let target): target == user
        case .channel(let cid): await membership.contains(user, in: cid)
        case nil: false
        }
    }

    /// Registers a connection for `userID`; with `lastSeq`, first replays every event after it that concerns the user.
    ///
    /// - Parameters:
    ///   - userID: The user.
    ///   - lastSeq: The last SEQ the client saw, or `nil` for live events only.
    /// - Returns: The connection; ``disconnect(_:)`` it when the socket closes.
    public func connect(userID: String, lastSeq: UInt64?) -> Connection {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let capacity = config.queueCapacity
        let (connection, routed) = hub.register(userID: userID) { routed in
            let replaying = lastSeq.map { $0 < routed } ?? false
            return Connection(id: id, userID: userID, lastSeq: lastSeq ?? routed, replaying: replaying, capacity: capacity)
        }
        if let lastSeq, lastSeq < routed {
            Task { await replay(connection, after: lastSeq, through: routed) }
        }
        return connection
    }

    /// Removes a connection.
    public func disconnect(_ connection: Connection) {
        connection.close()
        hub.unregister(connection)
    }

    /// Reads `out` from `after + 1` through `through` on a short-lived consumer and offers what concerns the user.
    private func replay(_ connection: Connection, after: UInt64, through: UInt64) async {
        let name = await replayNames.acquire()
        defer { Task { await replayNames.release(name) } }
        var ended = false
        do {
            let consumer = try await client.consume(name: name, start: .seq(after + 1), credit: config.credit, prefixes: ["out/"])
            for try await delivery in consumer {
                if delivery.seq > through { break }
                if await concerns(delivery, user: connection.userID) { connection.offerReplay(delivery) }
                consumer.ack(delivery.seq)
                if delivery.seq == through { break }
            }
            ended = true
            try await consumer.cancel()
        } catch {
            if !ended {
                logger.warning("replay failed; closing the connection", metadata: ["chat.user": "\(connection.userID)", "error": "\(error)"])
                disconnect(connection)
                return
            }
        }
        connection.finishReplay()
    }
}
