import EventBus
import Logging
import Synchronization

/// The streams of one server (`GET /v1/stream`): each is a durable consumer of the bus, on
/// the server's own connection, named from a ``ConsumerNamePool``, started after the
/// client's position (docs/http.md, "The stream").
public final class StreamHub: Sendable {
    let client: BusClient
    let settings: StreamSettings
    let logger: Logger
    /// What the streams are doing.
    public let counters: StreamCounters
    private let names: Mutex<ConsumerNamePool>

    public init(client: BusClient, settings: StreamSettings, consumerBase: String, logger: Logger) {
        self.client = client
        self.settings = settings
        self.logger = logger
        counters = StreamCounters(bufferCapacity: settings.bufferEvents)
        names = Mutex(ConsumerNamePool(base: consumerBase))
    }

    /// Starts the consumer of a stream: after `position`, reading what `scope` needs.
    ///
    /// - Throws: ``HTTPProblem`` for a bus that refuses or does not answer (a `forbidden`
    ///   when the ingress's key may not consume, a `timeout`).
    func open(scope: StreamScope, position: StreamPosition) async throws(HTTPProblem) -> StreamSession {
        let after: UInt64
        switch position {
        case .after(let seq): after = seq
        case .now: after = try await head()
        }
        let name = names.withLock { $0.take() }
        do {
            let start: ConsumeStart = scope.readsFromStart ? .earliest : .seq(after == .max ? after : after + 1)
            let consumer = try await client.consume(name: name, start: start, credit: settings.credit, prefixes: scope.consumerPrefixes)
            logger.debug("stream opened", metadata: ["stream.consumer": "\(name)", "stream.after": "\(after)",
                                                     "stream.user": "\(scope.user ?? "-")", "stream.prefix": "\(scope.prefix)"])
            return StreamSession(hub: self, consumer: consumer, scope: scope, after: after)
        } catch {
            release(name)
            throw HTTPProblem(error)
        }
    }

    /// Gives a stream's consumer name back once it has ended.
    func release(_ name: String) {
        names.withLock { $0.give(name) }
    }

    /// The SEQ of the newest event of the log (STATS `head_seq`).
    private func head() async throws(HTTPProblem) -> UInt64 {
        let stats: [UInt8]
        do { stats = try await client.stats() } catch { throw HTTPProblem(error) }
        guard let head = (try? JSONParser.parse(stats))?["head_seq"]?.int64Value, head >= 0 else {
            throw HTTPProblem(status: 502, code: ErrorCode.badFrame.wire, detail: "the broker's STATS carried no head_seq")
        }
        return UInt64(head)
    }
}
