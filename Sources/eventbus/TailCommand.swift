import ArgumentParser
import EventBus

/// `eventbus tail`: events as NDJSON, live from the stream or from a durable consumer.
struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Print events as NDJSON: {\"seq\":N,\"topic\":\"…\",\"event\":{…}}.",
        discussion: """
            Without --durable, the live stream from now on (best effort; gaps show in seq). \
            With --durable NAME, a durable consumer from --from (default resume), acking each \
            event after printing it.
            """)

    @OptionGroup var client: ClientOptions

    @Argument(help: "Topic prefix; end it with /.")
    var prefix: String = "out/"

    @Option(help: ArgumentHelp("earliest, latest or a SEQ (other than latest: with --durable).", valueName: "FROM"))
    var from: String?

    @Option(help: "Read as the durable consumer NAME ([a-z0-9_.-]{1,64}).")
    var durable: String?

    @Option(name: .customLong("stream"), help: ArgumentHelp("The broker's stream endpoint.", valueName: "EP"))
    var streamEndpoint: String = WireProtocol.defaultStreamEndpoint

    @Option(help: "Exit after N events.")
    var count: Int?

    @Option(help: "With --durable: events the broker may send ahead of the ACKs.")
    var credit: Int = 1_000

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let from {
            guard ConsumeStart(wire: from) != nil, from != "resume" || durable != nil else {
                throw ValidationError("--from must be earliest, latest or a SEQ")
            }
            if durable == nil && from != "latest" {
                throw ValidationError("the live stream only starts at latest; use --durable NAME to read from \(from)")
            }
        }
        if let durable, durable.isEmpty || durable.count > 64
            || !durable.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || "-_.".contains($0)) }) {
            throw ValidationError("--durable NAME must match [a-z0-9_.-]{1,64}")
        }
        if !(1...WireProtocol.maxCredit).contains(credit) { throw ValidationError("--credit must be 1 to \(WireProtocol.maxCredit)") }
    }

    func run() async throws {
        if let durable {
            try await tailDurable(name: durable)
        } else {
            try await tailLive()
        }
    }

    /// One output line: the event bytes inserted as received.
    static func line(_ delivery: Delivery) -> [UInt8] {
        Array("{\"seq\":\(delivery.seq),\"topic\":\(CloudEventEnvelope.quoted(delivery.topic)),\"event\":".utf8)
            + delivery.event + Array("}\n".utf8)
    }

    func tailLive() async throws {
        // The stream socket cannot tell whether a broker is there: ask the command socket.
        let probe = try await client.connectedClient()
        probe.close()
        let subscription: Subscription
        do {
            subscription = try Subscription(endpoint: streamEndpoint, prefixes: [prefix], logger: client.logger(),
                                        curve: try client.curveKeys())
        } catch {
            throw Output.fail("cannot subscribe at \(streamEndpoint): \(error)")
        }
        defer { subscription.cancel() }
        var printed = 0
        for await delivery in subscription {
            Output.bytes(Self.line(delivery))
            printed += 1
            if let count, printed >= count { return }
        }
    }

    func tailDurable(name: String) async throws {
        let client = try await client.connectedClient()
        defer { client.close() }
        let start = from.flatMap(ConsumeStart.init(wire:)) ?? .resume
        let consumer: DurableConsumer
        do {
            consumer = try await client.consume(name: name, start: start, credit: credit, prefixes: [prefix])
        } catch {
            throw Output.fail(error, detail: "CONSUME \(name)")
        }
        var printed = 0
        do {
            for try await delivery in consumer {
                Output.bytes(Self.line(delivery))
                consumer.ack(delivery.seq)
                printed += 1
                if let count, printed >= count {
                    try? await consumer.cancel()
                    return
                }
            }
        } catch let error as BusError {
            throw Output.fail(error, detail: "consumer \(name)")
        }
        if let reason = consumer.endReason {
            throw Output.fail("consumer \(name) was taken over: \(reason)")
        }
    }
}
