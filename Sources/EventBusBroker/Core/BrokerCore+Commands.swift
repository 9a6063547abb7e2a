import EventBus

extension BrokerCore {
    /// Handles one message from the command socket.
    func handle(_ frames: [[UInt8]], userID: String? = nil) {
        let parsed: CommandMessage
        do {
            parsed = try CommandMessage.parse(frames)
        } catch {
            if !error.peer.isEmpty { sendError(to: error.peer, correlation: error.correlation, error.error) }
            return
        }
        do throws(BusError) {
            // Authorized before anything else is read of it; then a PUBS is handled and
            // answered as the PUB it stands for.
            try authorize(parsed, userID: userID)
            let message = try parsed.unbatched()
            switch message.verb {
            case .ping: reply(to: message.peer, correlation: message.correlation, [])
            case .hello: try handleHello(message)
            case .pub: try handlePub(message)
            case .consume: try handleConsume(message, client: userID)
            case .ack: try handleAck(message)
            case .cancel: try handleCancel(message)
            case .req: try handleRequest(message)
            case .stats: reply(to: message.peer, correlation: message.correlation, [statisticsJSON()])
            case .pubs, .ok, .err, .evt, .evts, .end:
                // CommandMessage.parse admits request verbs only, and a PUBS became a PUB.
                throw BusError(.badVerb, "frame 1: \(message.verb.rawValue) is not a request")
            }
        } catch {
            sendError(to: parsed.peer, correlation: parsed.correlation, error)
        }
    }

    /// The argument at `position` (0 = frame 3), or a `bad_frame` naming it.
    func argument(_ message: CommandMessage, _ position: Int, _ name: String) throws(BusError) -> [UInt8] {
        try message.argument(position, name)
    }

    private func handleHello(_ message: CommandMessage) throws(BusError) {
        let hello = try HelloRequest(message)
        if let declared = hello.services { services.formUnion(declared) }
        if let on = hello.batch { remember(message.peer, on, in: &batchPeers) }
        if let on = hello.compactOK { remember(message.peer, on, in: &compactPeers) }
        if let on = hello.ordered {
            remember(message.peer, on, in: &orderedPeers)
            if !on { refusedFirst[message.peer] = nil }
        }
        if let name = hello.name {
            logger.info("peer said hello", metadata: ["bus.peer": "\(name)"])
        }
        var w = JSONWriter()
        w.beginObject()
        w.key("protocol"); w.string("EB1")
        w.key("version"); w.string(BrokerVersion.string)
        w.key("stages"); w.beginArray(); for stage in config.stages { w.string(stage) }; w.endArray()
        w.key("services"); w.beginArray(); for service in services.sorted() { w.string(service) }; w.endArray()
        w.key("features"); w.beginArray(); w.string("batch"); w.string("compact_ok"); w.string("forward"); w.string("ordered"); w.string("pubs"); w.endArray()
        w.key("batch"); w.bool(batchPeers.contains(message.peer))
        w.key("compact_ok"); w.bool(compactPeers.contains(message.peer))
        w.key("ordered"); w.bool(orderedPeers.contains(message.peer))
        w.key("limits"); w.beginObject()
        w.key("max_event_bytes"); w.int(config.maxEventBytes)
        w.key("max_batch_events"); w.int(WireProtocol.maxBatchEvents)
        w.key("max_batch_bytes"); w.int(WireProtocol.maxBatchBytes)
        w.key("max_credit"); w.int(WireProtocol.maxCredit)
        w.key("request_timeout_ms"); w.int(config.requestTimeoutMilliseconds)
        w.endObject()
        w.endObject()
        reply(to: message.peer, correlation: message.correlation, [w.bytes])
    }

    /// Adds `peer` to (or, `on` false, removes it from) the peers that asked for a HELLO option.
    ///
    /// ZeroMQ does not say when a peer leaves, so a set that reaches 10,000 keeps
    /// only the peers of attached consumers; a peer dropped that way gets the
    /// base forms again (docs/protocol.md, "Extensions"), which every client of an option must still take.
    /// (`batch` takes effect at the peer's next CONSUME, `compact_ok` at its next PUB.)
    func remember(_ peer: [UInt8], _ on: Bool, in peers: inout Set<[UInt8]>) {
        guard on else {
            peers.remove(peer)
            return
        }
        if peers.count >= 10_000 {
            let attached = Set(consumers.values.compactMap(\.peer))
            peers = peers.filter(attached.contains)
        }
        peers.insert(peer)
    }

    /// STATS as JSON.
    func statisticsJSON() -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("version"); w.string(BrokerVersion.string)
        w.key("head_seq"); w.uint(log.headSeq)
        w.key("first_seq"); w.uint(log.firstSeq)
        w.key("durable_seq"); w.uint(log.durableSeq)
        w.key("stages"); w.beginObject()
        for stage in Set(config.stages).union(index.stages).sorted() {
            w.key(stage); w.int(index.count(in: stage) + (stage == Stage.out ? withheldOut : 0))
        }
        w.endObject()
        w.key("consumers"); w.beginArray()
        for consumer in consumers.values.sorted(by: { $0.name < $1.name }) {
            w.beginObject()
            w.key("name"); w.string(consumer.name)
            w.key("prefixes"); w.beginArray()
            for prefix in consumer.prefixes { w.string(String(decoding: prefix, as: UTF8.self)) }
            w.endArray()
            w.key("acked"); w.uint(consumer.acked)
            w.key("lag"); w.int(lag(of: consumer))
            w.key("in_flight"); w.int(consumer.inFlight.count)
            w.key("credit"); w.int(consumer.credit)
            w.key("connected"); w.bool(consumer.peer != nil)
            if let client = consumer.client { w.key("client"); w.string(client) }
            w.endObject()
        }
        w.endArray()
        w.key("rejected"); w.beginObject()
        for (code, count) in statistics.rejected.sorted(by: { $0.key.wire < $1.key.wire }) {
            w.key(code.wire); w.int(count)
        }
        w.endObject()
        w.key("diag"); w.beginObject()
        for (type, count) in statistics.diagnostics.sorted(by: { $0.key < $1.key }) { w.key(type); w.int(count) }
        w.endObject()
        w.key("dedup_hits"); w.int(statistics.dedupHits)
        w.key("forwarded"); w.int(statistics.forwarded)
        w.key("dedup_window_ids"); w.int(dedup.count)
        w.key("pending_requests"); w.int(requests.count)
        w.key("stream_subscriptions"); w.int(statistics.streamSubscriptions)
        w.key("dropped_replies"); w.int(statistics.droppedReplies)
        w.key("stream_overflows"); w.int(statistics.streamOverflows)
        w.key("forbidden"); w.int(statistics.forbidden)
        w.key("log"); w.beginObject()
        w.key("bytes"); w.uint(log.totalBytes)
        w.key("segments"); w.int(log.segmentCount)
        w.key("fsync"); w.string(config.fsync.rawValue)
        w.endObject()
        w.endObject()
        return w.bytes
    }

    /// Events of the consumer's stages after its last ACK.
    func lag(of consumer: ConsumerState) -> Int {
        guard let stages = consumer.stages else {
            return Int(log.headSeq - min(log.headSeq, consumer.acked))
        }
        return stages.reduce(0) { $0 + index.count(in: $1, after: consumer.acked) }
    }
}
