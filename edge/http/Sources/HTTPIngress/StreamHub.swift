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
    private let pipelineHead = Mutex<PipelineHead?>(nil)

    public init(client: BusClient, settings: StreamSettings, consumerBase: String, logger: Logger) {
        self.client = client
        self.settings = settings
        self.logger = logger
        counters = StreamCounters(bufferCapacity: settings.bufferEvents)
        names = Mutex(ConsumerNamePool(base: consumerBase))
    }

    /// Starts the consumers of a stream: of `out` after `position`, under the scope's prefix;
    /// for a user's stream also of `in` from the start of the log, for the membership.
    ///
    /// - Throws: ``HTTPProblem`` for a bus that refuses or does not answer (a `forbidden`
    ///   when the ingress's key may not consume, a `timeout`).
    func open(scope: StreamScope, position: StreamPosition) async throws(HTTPProblem) -> StreamSession {
        let after: UInt64
        switch position {
        case .after(let seq): after = seq
        case .now: after = try await head()
        }
        let firstPlugin = scope.readsMembership ? try await self.firstPlugin() : nil
        let name = names.withLock { $0.take() }
        var opened: [DurableConsumer] = []
        do {
            let consumer = try await client.consume(name: name, start: .seq(after == .max ? after : after + 1), credit: settings.credit,
                                                    prefixes: [scope.prefix])
            opened.append(consumer)
            var membership: (consumer: DurableConsumer, feed: MembershipFeed)?
            if let user = scope.user {
                let reader = try await client.consume(name: Self.membershipName(name), start: .earliest, credit: settings.credit,
                                                      prefixes: [StreamScope.membershipStage])
                opened.append(reader)
                membership = (reader, MembershipFeed(user: user))
            }
            logger.debug("stream opened", metadata: ["stream.consumer": "\(name)", "stream.after": "\(after)",
                                                     "stream.user": "\(scope.user ?? "-")", "stream.prefix": "\(scope.prefix)"])
            return StreamSession(hub: self, consumer: consumer, membership: membership, scope: scope, after: after, firstPlugin: firstPlugin)
        } catch {
            for consumer in opened { try? await consumer.cancel() }
            release(name)
            throw HTTPProblem(error)
        }
    }

    /// The name of a user's stream's consumer of `in`, beside `name`, its consumer of `out`.
    static func membershipName(_ name: String) -> String { name + "-in" }

    /// Gives a stream's consumer name back once it has ended.
    func release(_ name: String) {
        names.withLock { $0.give(name) }
    }

    /// The SEQ of the newest event of `out`: STATS `head_seq` from the broker (one sequence for
    /// the whole log), `head_seqs.out` from a cluster's gateway (a sequence per stage).
    private func head() async throws(HTTPProblem) -> UInt64 {
        let stats: [UInt8]
        do { stats = try await client.stats() } catch { throw HTTPProblem(error) }
        let parsed = try? JSONParser.parse(stats)
        guard let head = (parsed?["head_seq"] ?? parsed?["head_seqs"]?["out"])?.int64Value, head >= 0 else {
            throw HTTPProblem(status: 502, code: ErrorCode.badFrame.wire, detail: "the bus's STATS carried neither head_seq nor head_seqs.out")
        }
        return UInt64(head)
    }

    /// The plugin that reads `in`, from HELLO's `stages`; asked once, then kept.
    private func firstPlugin() async throws(HTTPProblem) -> String? {
        if let known = pipelineHead.withLock({ $0 }) { return known.plugin }
        let hello: [UInt8]
        do { hello = try await client.hello(role: "http-ingress", version: "1") } catch { throw HTTPProblem(error) }
        guard case .array(let items)? = (try? JSONParser.parse(hello))?["stages"] else {
            throw HTTPProblem(status: 502, code: ErrorCode.badFrame.wire, detail: "the bus's HELLO carried no stages")
        }
        let plugin = StreamScope.firstPlugin(stages: items.compactMap(\.stringValue))
        pipelineHead.withLock { $0 = PipelineHead(plugin: plugin) }
        return plugin
    }

    /// What HELLO said of the pipeline's first plugin.
    private struct PipelineHead {
        let plugin: String?
    }
}
