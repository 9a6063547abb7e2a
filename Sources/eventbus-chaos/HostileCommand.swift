import ArgumentParser
import EventBusChaos
import EventBusCore
import Foundation
import ZeroMQ

/// `eventbus-chaos hostile`: a hostile peer of a round (docs/reliability.md, "Hostile
/// peers"). It sends malformed frames, requests and events (``HostileMessages``) at a pace,
/// drawn from its seed, and never reads a reply: its receive queue stays full, so the broker
/// must neither wait for it nor keep what it cannot send. It runs until killed.
struct HostileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "hostile", abstract: "A hostile peer of a round (started by the campaign).")

    @Option var endpoint: String
    @Option var seed: UInt64
    @Option(help: "Messages per second.")
    var rate = 500

    func run() throws {
        let context = try Context()
        let socket = try Socket(context: context, type: .dealer)
        try socket.setLinger(0)
        // Replies pile up here, never read: a few, then ZeroMQ drops the rest at the broker.
        try socket.setReceiveHighWaterMark(4)
        try socket.connect(endpoint)
        var random = SplitMix64(seed: seed)
        let started = ContinuousClock.now
        var n = 0
        while true {
            let kind = HostileMessages.Kind.allCases[Int(random.next() % UInt64(HostileMessages.Kind.allCases.count))]
            // A message the broker's queue has no room for is dropped, as an attacker's would be.
            _ = try? socket.send(HostileMessages.message(kind, n: n), dontWait: true)
            n += 1
            let wait = (started + .milliseconds(n * 1_000 / max(1, rate)) - .now) / .seconds(1)
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }  // the peer's pace
        }
    }
}
