import Logging

/// A connection to the broker's command socket (DEALER to its ROUTER).
///
/// One DEALER socket, owned by a private I/O thread; every method may be called from
/// any task, concurrently. Requests are pipelined and matched to their replies by
/// CORR. The client reconnects by itself: when the connection comes back after a
/// loss, it resends every request still waiting for its reply and resumes every
/// durable consumer after its last ACK. Every call fails with ``ErrorCode/timeout``
/// after ``BusClientOptions/requestTimeout`` rather than hang.
///
/// ```swift
/// let client = try BusClient(options: .init(endpoint: "tcp://127.0.0.1:7750"))
/// let seq = try await client.publish(Array(event.utf8))
/// client.close()
/// ```
///
/// Errors are ``BusError``s: the broker's `ERR` code and message, ``ErrorCode/timeout``
/// when no reply came in time, ``ErrorCode/badFrame`` for a reply the client cannot
/// read, and ``ErrorCode/busy`` once the client is closed.
public final class BusClient: Sendable {
    /// The options the client was made with.
    public let options: BusClientOptions
    let io: ClientIO
    let logger: Logger

    /// Connects to the broker (in the background: the first call waits for the connection).
    ///
    /// - Parameters:
    ///   - options: The endpoint, name and timeouts.
    ///   - logger: Where the client logs reconnects and protocol trouble.
    /// - Throws: A `ZMQError` for an endpoint libzmq rejects.
    public init(options: BusClientOptions = .init(), logger: Logger = Logger(label: "eventbus.client")) throws {
        self.options = options
        self.logger = logger
        self.io = try ClientIO(options: options, logger: logger)
    }

    deinit { io.close() }

    /// Closes the connection: waiting calls fail with ``ErrorCode/busy``, consumers end.
    ///
    /// Blocks for at most a second while ACKs already made reach the broker. Calls after
    /// `close()` fail at once. Safe to call more than once.
    public func close() {
        io.close()
    }

    // MARK: Requests

    /// Sends `verb` with `arguments` and waits for the reply's frames after CORR.
    func call(_ verb: Verb, _ arguments: [[UInt8]] = []) async throws(BusError) -> [[UInt8]] {
        let io = self.io
        let result: ClientIO.Reply = await withCheckedContinuation { continuation in
            if !io.submit(.request(verb, arguments, continuation)) {
                continuation.resume(returning: .failure(Self.closedError))
            }
        }
        return try result.get()
    }

    static let closedError = BusError(.busy, "the client is closed")

    /// Publishes `events` to `stage` in one `PUB`: all are appended, or none. A batch goes as one
    /// `PUBS` (its events in one frame) once the broker has said it takes them.
    ///
    /// Safe to retry: the broker deduplicates by (stage, `source`, `id`) and answers a
    /// repeat with the original SEQs, so the client resends it after a reconnect.
    ///
    /// - Parameters:
    ///   - events: CloudEvents JSON, 1 to 1,000 events, 4 MiB in all; none returns `[]` at once.
    ///   - stage: `in` for backends; a plugin's output stage for plugins.
    /// - Returns: The SEQ of each event, in order.
    /// - Throws: The broker's `ERR` (such as ``ErrorCode/badEvent``, naming the event index), or ``ErrorCode/timeout``.
    public func publish(_ events: [[UInt8]], stage: String = "in") async throws(BusError) -> [UInt64] {
        if events.isEmpty { return [] }
        let body = try await call(.pub, [Array(stage.utf8)] + events)
        return try ClientFrames.parseSeqs(body, expected: events.count).get()
    }

    /// Publishes one event to `stage` and returns its SEQ.
    ///
    /// - Parameters:
    ///   - event: One CloudEvents JSON event.
    ///   - stage: The stage to publish to.
    /// - Returns: The event's SEQ.
    public func publish(_ event: [UInt8], stage: String = "in") async throws(BusError) -> UInt64 {
        let seqs = try await publish([event], stage: stage)
        // Safe: `publish` checked that the reply has exactly one SEQ per event.
        return seqs[0]
    }

    /// Sends a request to a service (`REQ`) and returns the JSON of its `OK` reply.
    ///
    /// Not resent after `resendAfter`: it waits up to `requestTimeout`, then fails with
    /// ``ErrorCode/timeout`` (it is resent once the connection comes back after a loss).
    ///
    /// - Parameters:
    ///   - service: The service, such as `receipts`.
    ///   - method: The method name.
    ///   - params: The params, JSON object text (empty means `{}`), inserted as given.
    /// - Returns: The reply's JSON bytes.
    public func request(service: String, method: String, params: String) async throws(BusError) -> [UInt8] {
        let body = try await call(.req, [Array(service.utf8), ClientFrames.requestBody(method: method, params: params)])
        return body.first ?? []
    }

    /// The broker's statistics (`STATS`), as JSON bytes.
    public func stats() async throws(BusError) -> [UInt8] {
        try await call(.stats).first ?? []
    }

    /// The optional handshake (`HELLO`): introduces this client and returns the broker's info JSON.
    ///
    /// - Parameters:
    ///   - role: This client's role, such as `backend` or `plugin`.
    ///   - version: This client's version.
    ///   - services: Services this client answers, which a REQ may then name (docs/protocol.md, HELLO).
    /// - Returns: JSON with the broker's version, stages and limits.
    public func hello(role: String, version: String, services: [String]? = nil) async throws(BusError) -> [UInt8] {
        try await call(.hello, [ClientFrames.helloBody(name: options.name, role: role, version: version, services: services)]).first ?? []
    }

    /// Checks that the broker answers (`PING`).
    public func ping() async throws(BusError) {
        _ = try await call(.ping)
    }

    // MARK: Durable consumers

    /// Starts (or takes over) the durable consumer `name` (`CONSUME`).
    ///
    /// - Parameters:
    ///   - name: The consumer name, `[a-z0-9_.-]{1,64}`; its offset persists in the broker.
    ///   - start: Where to start; ``ConsumeStart/resume`` continues after the last ACK.
    ///   - credit: How many events the broker may send before they are acked (1-65,536).
    ///   - prefixes: Topic prefixes; end them with `/`.
    /// - Returns: The consumer: iterate it for deliveries, ``DurableConsumer/ack(_:)`` them.
    public func consume(
        name: String, start: ConsumeStart = .resume, credit: Int = 1000, prefixes: [String]
    ) async throws(BusError) -> DurableConsumer {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Delivery.self, throwing: (any Error).self)
        let sink = ConsumerSink(continuation: continuation)
        let io = self.io
        let result: ClientIO.Reply = await withCheckedContinuation { waiter in
            let command = ClientIO.Command.consume(
                name: name, start: start, credit: credit, prefixes: prefixes, waiter, sink)
            if !io.submit(command) { waiter.resume(returning: .failure(Self.closedError)) }
        }
        let body = try result.get()
        guard let first = body.first, let firstSeq = ClientFrames.parseDecimal(first) else {
            _ = try? await cancel(consumer: name)
            throw BusError(.badFrame, "OK for CONSUME \(name) did not carry a decimal SEQ")
        }
        return DurableConsumer(name: name, firstSeq: firstSeq, stream: stream, sink: sink, client: self)
    }

    func ack(consumer name: String, seq: UInt64) {
        _ = io.submit(.ack(name: name, seq: seq))
    }

    func cancel(consumer name: String) async throws(BusError) {
        let io = self.io
        let result: ClientIO.Reply = await withCheckedContinuation { waiter in
            if !io.submit(.cancel(name: name, waiter)) { waiter.resume(returning: .failure(Self.closedError)) }
        }
        _ = try result.get()
    }
}
