/// Building the messages a client sends and parsing the ones it receives (EB1).
///
/// Pure functions over frames, no I/O, so that they are tested on their own. Every
/// peer of this package that speaks EB1 builds and reads its messages here: the
/// client (``ClientState``), the plugin runner and the supervisor's readiness probe.
package enum ClientFrames {
    /// A message from the broker, parsed once.
    package enum Inbound: Equatable {
        /// `OK` for a request: the frames after CORR.
        case ok(corr: [UInt8], body: [[UInt8]])
        /// `ERR` for a request.
        case err(corr: [UInt8], error: BusError)
        /// `EVT` pushed to a durable consumer.
        case event(name: String, delivery: Delivery)
        /// `EVTS`: many events pushed to a durable consumer (batched delivery), in SEQ order.
        case events(name: String, deliveries: [Delivery])
        /// `END`: the consumer was taken over or stopped by the broker.
        case end(name: String, reason: String)
        /// Anything else; the string says what is wrong.
        case malformed(String)
    }

    /// The first byte of the CORR of an `ACK`, followed by the 8-byte SEQ acked.
    ///
    /// An ACK has no reply unless it fails; this lets the client say which ACK failed
    /// without remembering any. Request CORRs are exactly 8 bytes, so the two never clash.
    package static let ackCorrelationMarker = UInt8(ascii: "A")

    /// The CORR of the `HELLO` that asks for batched delivery on a connection: one byte, so that it
    /// is neither a request's nor an ACK's.
    package static let batchHelloCorrelation: [UInt8] = [UInt8(ascii: "B")]

    /// `HELLO {"batch": true}`: this connection's consumers get `EVTS` (docs/protocol.md, "Batched delivery").
    package static let batchHello: [[UInt8]] = request(.hello, corr: batchHelloCorrelation, [Array(#"{"batch":true}"#.utf8)])

    /// `HELLO {"batch": true, "ordered": true}`: batched delivery and ordered publishing
    /// (docs/protocol.md, "Ordered publishing"), with the CORR of ``batchHello``.
    package static let orderedBatchHello: [[UInt8]] =
        request(.hello, corr: batchHelloCorrelation, [Array(#"{"batch":true,"ordered":true}"#.utf8)])

    /// A request's CORR: the request number as 8 big-endian bytes.
    package static func correlation(_ number: UInt64) -> [UInt8] {
        withUnsafeBytes(of: number.bigEndian) { Array($0) }
    }

    /// The request number in a CORR made by ``correlation(_:)``, or `nil`.
    package static func requestNumber(_ corr: [UInt8]) -> UInt64? {
        guard corr.count == 8 else { return nil }
        return bigEndianUInt64(corr)
    }

    /// The SEQ in an ACK's CORR, or `nil` when `corr` is not one.
    package static func ackedSeq(_ corr: [UInt8]) -> UInt64? {
        guard corr.count == 9, corr[0] == ackCorrelationMarker else { return nil }
        return bigEndianUInt64(corr[1...])
    }

    /// Decodes 8 big-endian bytes (the stream socket's SEQ frame); `nil` for another length.
    package static func bigEndianUInt64<C: Collection<UInt8>>(_ bytes: C) -> UInt64? {
        guard bytes.count == 8 else { return nil }
        return bytes.reduce(0) { ($0 << 8) | UInt64($1) }
    }

    /// A request: `"EB1", VERB, CORR, args…`.
    package static func request(_ verb: Verb, corr: [UInt8], _ arguments: [[UInt8]] = []) -> [[UInt8]] {
        [WireProtocol.signature, verb.bytes, corr] + arguments
    }

    /// `ACK NAME SEQ`, with a CORR that names the SEQ.
    package static func ack(name: String, seq: UInt64) -> [[UInt8]] {
        request(.ack, corr: [ackCorrelationMarker] + correlation(seq), [Array(name.utf8), decimal(seq)])
    }

    /// The arguments of `CONSUME`: NAME, START, CREDIT, PREFIX….
    package static func consumeArguments(name: String, start: ConsumeStart, credit: Int, prefixes: [String]) -> [[UInt8]] {
        [Array(name.utf8), Array(start.wire.utf8), decimal(UInt64(max(credit, 0)))] + prefixes.map { Array($0.utf8) }
    }

    /// The `REQ` body: `{"method": METHOD, "params": PARAMS}`, PARAMS inserted as given.
    package static func requestBody(method: String, params: String) -> [UInt8] {
        let trimmed = params.trimmingASCIIWhitespace()
        return Array("{\"method\":\(JSONText.quoted(method)),\"params\":\(trimmed.isEmpty ? "{}" : trimmed)}".utf8)
    }

    /// The `HELLO` body: `{"name", "role", "version"}`, then, when given, what a long-lived
    /// peer asks of its connection (docs/protocol.md, "HELLO"): `batch` (its consumers get
    /// `EVTS`), `compact_ok` (a PUB's OK in one frame), `ordered` (a PUB refused `busy` goes
    /// before any later one) and the `services` it answers.
    package static func helloBody(
        name: String, role: String, version: String,
        batch: Bool? = nil, compactOK: Bool? = nil, ordered: Bool? = nil, services: [String]? = nil
    ) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("name"); writer.string(name)
        writer.key("role"); writer.string(role)
        writer.key("version"); writer.string(version)
        if let batch { writer.key("batch"); writer.bool(batch) }
        if let compactOK { writer.key("compact_ok"); writer.bool(compactOK) }
        if let ordered { writer.key("ordered"); writer.bool(ordered) }
        if let services {
            writer.key("services")
            writer.beginArray()
            for service in services { writer.string(service) }
            writer.endArray()
        }
        writer.endObject()
        return writer.bytes
    }

    /// `HELLO BODY` as request `number`.
    package static func hello(request number: UInt64, body: [UInt8]) -> [[UInt8]] {
        request(.hello, corr: correlation(number), [body])
    }

    /// `CONSUME NAME START CREDIT PREFIX…` as request `number`.
    package static func consume(
        request number: UInt64, name: String, start: ConsumeStart, credit: Int, prefixes: [String]
    ) -> [[UInt8]] {
        request(.consume, corr: correlation(number), consumeArguments(name: name, start: start, credit: credit, prefixes: prefixes))
    }

    /// `PUB STAGE EVENT…` as request `number`: each event in a frame of its own.
    package static func publish(request number: UInt64, stage: String, events: [[UInt8]]) -> [[UInt8]] {
        [WireProtocol.signature, Verb.pub.bytes, correlation(number), Array(stage.utf8)] + events
    }

    /// `PUBS STAGE BATCH` as request `number`: the events in one frame (docs/protocol.md,
    /// "Batched publish"), for a broker whose HELLO lists `pubs`.
    package static func publishBatch(request number: UInt64, stage: String, events: [[UInt8]]) -> [[UInt8]] {
        request(.pubs, corr: correlation(number), [Array(stage.utf8), PublishBatch.encode(events)])
    }

    /// `PING` as request `number`.
    package static func ping(request number: UInt64) -> [[UInt8]] {
        request(.ping, corr: correlation(number))
    }

    /// `STATS` as request `number`.
    package static func stats(request number: UInt64) -> [[UInt8]] {
        request(.stats, corr: correlation(number))
    }

    /// ASCII decimal, as every SEQ on the command socket.
    package static func decimal(_ value: UInt64) -> [UInt8] { Array(String(value).utf8) }

    /// Parses an ASCII decimal SEQ frame: digits only, no sign, no spaces.
    package static func parseDecimal(_ frame: [UInt8]) -> UInt64? {
        ASCIIDecimal.parse(frame[...])
    }

    /// The SEQs of a `PUB`'s `OK` body: one frame per event published, or, for a
    /// connection that asked for `compact_ok` in HELLO, one frame of them all
    /// separated by spaces (the two are the same for one event).
    package static func parseSeqs(_ body: [[UInt8]], expected: Int) -> Result<[UInt64], BusError> {
        if body.count == 1 && expected > 1 {
            let parts = body[0].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            guard parts.count == expected else {
                return .failure(BusError(.badFrame, "OK for PUB carried \(parts.count) SEQs in one frame for \(expected) events"))
            }
            let seqs = parts.compactMap(ASCIIDecimal.parse)
            guard seqs.count == expected else {
                return .failure(BusError(.badFrame, "OK for PUB: a SEQ in its one frame is not a decimal number"))
            }
            return .success(seqs)
        }
        guard body.count == expected else {
            return .failure(BusError(.badFrame, "OK for PUB carried \(body.count) SEQ frames for \(expected) events"))
        }
        var seqs: [UInt64] = []
        seqs.reserveCapacity(body.count)
        for (index, frame) in body.enumerated() {
            guard let seq = parseDecimal(frame) else {
                return .failure(BusError(.badFrame, "OK for PUB: SEQ frame \(index) is not a decimal number"))
            }
            seqs.append(seq)
        }
        return .success(seqs)
    }

    /// Parses a message received on the DEALER.
    package static func parse(_ frames: [[UInt8]]) -> Inbound {
        guard frames.count >= 2 else { return .malformed("a message of \(frames.count) frame(s)") }
        guard frames[0] == WireProtocol.signature else { return .malformed("frame 0 is not the EB1 signature") }
        let verbText = String(decoding: frames[1], as: UTF8.self)
        switch Verb(rawValue: verbText) {
        case .ok:
            guard frames.count >= 3 else { return .malformed("OK without CORR") }
            return .ok(corr: frames[2], body: Array(frames.dropFirst(3)))
        case .err:
            guard frames.count >= 5 else { return .malformed("ERR with \(frames.count) frames, expected 5") }
            let codeText = String(decoding: frames[3], as: UTF8.self)
            let message = String(decoding: frames[4], as: UTF8.self)
            let error = ErrorCode(rawValue: codeText).map { BusError($0, message) }
                ?? BusError(.badFrame, "unknown error code \(codeText): \(message)")
            return .err(corr: frames[2], error: error)
        case .evt:
            guard frames.count == 6 else { return .malformed("EVT with \(frames.count) frames, expected 6") }
            guard let seq = parseDecimal(frames[3]) else { return .malformed("EVT SEQ frame is not a decimal number") }
            let delivery = Delivery(seq: seq, topic: String(decoding: frames[4], as: UTF8.self), event: frames[5])
            return .event(name: String(decoding: frames[2], as: UTF8.self), delivery: delivery)
        case .evts:
            guard frames.count == 4 else { return .malformed("EVTS with \(frames.count) frames, expected 4") }
            var deliveries: [Delivery] = []
            let complete = DeliveryBatch.decode(frames[3]) { seq, topic, event in
                deliveries.append(Delivery(seq: seq, topic: String(decoding: topic, as: UTF8.self), event: Array(event)))
            }
            guard complete else { return .malformed("EVTS batch is not well formed") }
            return .events(name: String(decoding: frames[2], as: UTF8.self), deliveries: deliveries)
        case .end:
            guard frames.count >= 3 else { return .malformed("END without NAME") }
            let reason = frames.count >= 4 ? String(decoding: frames[3], as: UTF8.self) : ""
            return .end(name: String(decoding: frames[2], as: UTF8.self), reason: reason)
        default:
            return .malformed("unexpected verb \(verbText.prefix(32))")
        }
    }
}

/// Minimal JSON text helpers (the client builds a few small JSON objects).
enum JSONText {
    /// `value` as a JSON string literal, with quotes, backslashes and control characters escaped.
    static func quoted(_ value: String) -> String {
        var writer = JSONWriter(capacity: value.utf8.count + 2)
        writer.string(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs, CRs and LFs.
    func trimmingASCIIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }),
              let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
