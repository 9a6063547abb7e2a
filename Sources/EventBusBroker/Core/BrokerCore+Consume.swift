import EventBus

extension BrokerCore {
    /// `CONSUME NAME START CREDIT PREFIX…`, from the authenticated `client` (`nil` without keys).
    func handleConsume(_ message: CommandMessage, client: String? = nil) throws(BusError) {
        let name = String(decoding: try argument(message, 0, "NAME"), as: UTF8.self)
        guard Self.isValidConsumerName(name) else {
            throw BusError(.badArgs, "frame 3: consumer NAME must match [a-z0-9_.-]{1,64}")
        }
        let startFrame = try argument(message, 1, "START")
        let start = String(decoding: startFrame, as: UTF8.self)
        // Decimals as every SEQ on the command socket: 1 to 20 digits, no sign (docs/protocol.md, "Encodings").
        guard let credit = ASCIIDecimal.parse(try argument(message, 2, "CREDIT")[...]), credit >= 1,
              credit <= UInt64(WireProtocol.maxCredit) else {
            throw BusError(.badArgs, "frame 5: CREDIT must be a decimal from 1 to \(WireProtocol.maxCredit)")
        }
        let prefixes = Array(message.arguments.dropFirst(3))
        guard !prefixes.isEmpty else {
            throw BusError(.badArgs, "CONSUME: at least one PREFIX frame (frame 6) is needed")
        }
        var stages: Set<String>? = []
        for (position, prefix) in prefixes.enumerated() {
            let matching = stagesMatching(prefix)
            if matching.isEmpty {
                throw BusError(.unknownStage, "frame \(6 + position): prefix \"\(String(decoding: prefix.prefix(64), as: UTF8.self))\" matches no configured stage")
            }
            if matching.count == 1 && prefix.contains(UInt8(ascii: "/")) {
                stages?.formUnion(matching)
            } else {
                stages = nil  // spans stages: walk the whole log
            }
        }

        let head = log.headSeq
        let first: UInt64
        let consumer = consumers[name] ?? ConsumerState(name: name, acked: 0)
        switch start {
        case "earliest": first = log.firstSeq
        case "latest": first = head + 1
        case "resume": first = max(consumer.acked + 1, log.firstSeq)
        default:
            guard let seq = ASCIIDecimal.parse(startFrame[...]), seq >= 1 else {
                throw BusError(.badArgs, "frame 4: START must be earliest, latest, resume or a SEQ ≥ 1")
            }
            first = max(seq, log.firstSeq)
        }

        if let previous = consumer.peer, previous != message.peer {
            send(to: previous, [WireProtocol.signature, Verb.end.bytes, Array(name.utf8), Array("taken over by another CONSUME".utf8)])
        }
        consumer.peer = message.peer
        consumer.client = client
        consumer.batched = batchPeers.contains(message.peer)
        consumer.credit = Int(credit)
        consumer.prefixes = prefixes
        consumer.stages = stages.map { Array($0).sorted() }
        consumer.rewind(to: first)
        consumers[name] = consumer
        offsetsDirty = true
        logger.info("consumer attached", metadata: ["bus.consumer": "\(name)", "bus.seq": "\(first)"])
        reply(to: message.peer, correlation: message.correlation, [Array(String(first).utf8)])
    }

    /// `ACK NAME SEQ`: cumulative; no reply unless it fails.
    func handleAck(_ message: CommandMessage) throws(BusError) {
        // Frames first (a missing one is bad_frame), then what they name.
        _ = try argument(message, 0, "NAME")
        let frame = try argument(message, 1, "SEQ")
        let consumer = try ownConsumer(message)
        guard let seq = ASCIIDecimal.parse(frame[...]), seq >= 1, seq <= log.headSeq else {
            throw BusError(.badArgs, "frame 4: SEQ must be a decimal from 1 to the head SEQ \(log.headSeq)")
        }
        consumer.acknowledge(seq)
        offsetsDirty = true
    }

    /// `CANCEL NAME`: stop delivery, keep the offset.
    func handleCancel(_ message: CommandMessage) throws(BusError) {
        let consumer = try ownConsumer(message)
        consumer.peer = nil
        consumer.rewind(to: consumer.acked + 1)
        reply(to: message.peer, correlation: message.correlation, [])
    }

    private func ownConsumer(_ message: CommandMessage) throws(BusError) -> ConsumerState {
        let name = String(decoding: try argument(message, 0, "NAME"), as: UTF8.self)
        guard let consumer = consumers[name], consumer.peer == message.peer else {
            throw BusError(.badArgs, "frame 3: no consumer \"\(name.prefix(64))\" on this connection")
        }
        return consumer
    }

    static func isValidConsumerName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5f || byte == 0x2e || byte == 0x2d
        }
    }

    /// The configured stages a topic prefix can match.
    func stagesMatching(_ prefix: [UInt8]) -> Set<String> {
        BrokerAccess.stages(stageNames, matching: prefix)
    }
}
