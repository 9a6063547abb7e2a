// eventbus-gateway-bench: gateway fan-out, `out` events/s pushed to CLIENTS websocket
// clients, beside the bus's own `out` rate measured in the same run.
//
//   eventbus-gateway-bench COMMAND_ENDPOINT GATEWAY_WS_URL CLIENTS EVENTS
//
// Creates a channel whose members are the CLIENTS users, connects one websocket per
// user, publishes EVENTS `message.new` to the channel (PUB batches of 100, confirmed),
// and prints one line:
//   gateway clients=N events=E out_events_per_s=X gateway_events_per_s=Y frames_per_s=Z
// where out_events_per_s is the rate at which a durable consumer of `out` saw the events
// (the bus's own rate) and gateway_events_per_s the rate at which every client got every
// event (first publish to last frame).
import EventBus
import Foundation
import HummingbirdWSClient
import Logging
import Synchronization

struct BenchError: Error, CustomStringConvertible {
    let description: String
}

let arguments = CommandLine.arguments
guard arguments.count == 5, let clients = Int(arguments[3]), let events = Int(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: eventbus-gateway-bench COMMAND_ENDPOINT GATEWAY_WS_URL CLIENTS EVENTS\n".utf8))
    exit(2)
}
let commandEndpoint = arguments[1], gatewayURL = arguments[2]
let cid = "messaging:bench-\(UInt32.random(in: 0...UInt32.max))"
var logger = Logger(label: "gateway-bench")
logger.logLevel = .error

let client = try BusClient(options: .init(endpoint: commandEndpoint, name: "gateway-bench", requestTimeout: .seconds(60)), logger: logger)
let members = (0..<clients).map { "\"u\($0)\"" }.joined(separator: ",")
_ = try await client.publish(Array(#"{"specversion":"1.0","id":"\#(cid)-create","source":"/bench","type":"channel.created","subject":"\#(cid)","data":{"cid":"\#(cid)","members":[\#(members)]}}"#.utf8))

// The clients: each counts the frames of the bench channel it receives.
let frames = Atomic<Int>(0)
let connected = Atomic<Int>(0)
let closed = Atomic<Int>(0)
let lastFrame = Mutex<ContinuousClock.Instant?>(nil)
let total = clients * events
for index in 0..<clients {
    Task {
        _ = try? await WebSocketClient.connect(url: "\(gatewayURL)?user_id=u\(index)", logger: logger) { inbound, _, _ in
            connected.add(1, ordering: .relaxed)
            for try await message in inbound.messages(maxSize: 1 << 20) {
                guard case .text(let text) = message, text.contains(cid) else { continue }
                if frames.add(1, ordering: .relaxed).newValue == total {
                    lastFrame.withLock { $0 = .now }
                }
            }
        }
        closed.add(1, ordering: .relaxed)
    }
}
let connectDeadline = ContinuousClock.now + .seconds(120)
while connected.load(ordering: .relaxed) < clients {
    guard ContinuousClock.now < connectDeadline else { throw BenchError(description: "only \(connected.load(ordering: .relaxed)) of \(clients) clients connected") }
    try await Task.sleep(for: .milliseconds(20))
}

// The bus's own rate: a durable consumer of the channel's `out` events.
let consumer = try await client.consume(name: "gateway-bench-\(UInt32.random(in: 0...UInt32.max))", start: .latest, credit: 10_000, prefixes: ["out/\(cid)/"])
let busDone = Task { () -> ContinuousClock.Instant in
    var seen = 0
    for try await delivery in consumer {
        consumer.ack(delivery.seq)
        seen += 1
        if seen == events { break }
    }
    return .now
}

let started = ContinuousClock.now
var sent = 0
while sent < events {
    let batch = (sent..<min(sent + 100, events)).map { n in
        Array(#"{"specversion":"1.0","id":"\#(cid)-\#(n)","source":"/bench","type":"message.new","subject":"\#(cid)","data":{"cid":"\#(cid)","message":{"id":"m\#(n)","user_id":"u0","created_at":"2026-11-22T03:00:00.000Z","text":"bench"}}}"#.utf8)
    }
    _ = try await client.publish(batch)
    sent += batch.count
}
let busFinished = try await busDone.value
try? await consumer.cancel()
let deadline = ContinuousClock.now + .seconds(300)
while lastFrame.withLock({ $0 }) == nil {
    guard ContinuousClock.now < deadline else {
        throw BenchError(description: "frames missing: \(frames.load(ordering: .relaxed)) of \(total); \(closed.load(ordering: .relaxed)) clients closed")
    }
    try await Task.sleep(for: .milliseconds(10))
}
let gatewayFinished = lastFrame.withLock { $0 }!

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
let busSeconds = seconds(busFinished - started), gatewaySeconds = seconds(gatewayFinished - started)
print("gateway clients=\(clients) events=\(events) out_events_per_s=\(Int(Double(events) / busSeconds)) gateway_events_per_s=\(Int(Double(events) / gatewaySeconds)) frames_per_s=\(Int(Double(total) / gatewaySeconds))")
client.close()
exit(0)
