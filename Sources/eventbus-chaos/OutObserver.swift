import EventBusChaos
import Foundation
import Synchronization
import ZeroMQ

/// The campaign's durable consumer of `out` (`chaos-observer`), on a thread of its own with
/// its own DEALER: it records every delivery, ACKs as it goes and sends a PING after each ACK
/// (the broker handles one connection's commands in order, so the answer says the ACK was
/// taken). It attaches again on a new connection, with `resume`, whenever the old one stops
/// answering or no longer holds the consumer (ERR to an ACK, END), and, when idle, ACKs its
/// last event again to find out. Its ``log`` is what ``ChaosChecker``'s resume rules read.
final class OutObserver: Sendable {
    static let name = "chaos-observer"

    private struct Shared {
        var log = ObserverLog()
        var wantPause = false
        var paused = false
        var reattach = false
        var stop = false
        var finished = false
        var failure: String?
    }

    private let shared = Mutex(Shared())
    private let endpoint: String
    private let clock: RoundClock

    init(endpoint: String, clock: RoundClock) {
        self.endpoint = endpoint
        self.clock = clock
    }

    var log: ObserverLog { shared.withLock { $0.log } }

    /// Adds a step the campaign saw (a broker kill) to the history, in order.
    func note(_ step: ObserverLog.Step) { shared.withLock { $0.log.steps.append(step) } }

    func start() {
        let thread = Thread { [self] in
            do {
                try loop()
            } catch {
                shared.withLock { $0.failure = "\(error)" }
            }
            shared.withLock { $0.finished = true }
        }
        thread.name = "chaos-observer"
        thread.start()
    }

    /// Stops reading (nothing delivered from now on is recorded) and returns once it has.
    func pause() async {
        shared.withLock { $0.wantPause = true }
        while !(shared.withLock { $0.paused || $0.finished }) { try? await Task.sleep(for: .milliseconds(5)) }  // poll interval
    }

    /// Reads again, on a new connection: what the old one holds was sent before a crash.
    func resume() {
        shared.withLock {
            $0.wantPause = false
            $0.reattach = true
        }
    }

    /// ACKs what it received, waits for the broker to take it (3 s at most), and ends.
    func stop() async throws {
        shared.withLock { $0.stop = true }
        while !(shared.withLock { $0.finished }) { try await Task.sleep(for: .milliseconds(10)) }  // poll interval
        if let failure = shared.withLock({ $0.failure }) { throw ChaosRunError("observer: \(failure)") }
    }

    private func loop() throws {
        let context = try Context()
        var socket: Socket?
        var attachments = 0
        var lastDelivered: UInt64?
        var unacked = 0
        var ping: (seq: UInt64, at: Double)?
        var consumeSent: Double?
        var lastFrame = clock.seconds
        var stopping: Double?

        func frames(_ verb: String, _ corr: String, _ arguments: [String]) -> [[UInt8]] {
            [Array("EB1".utf8), Array(verb.utf8), Array(corr.utf8)] + arguments.map { Array($0.utf8) }
        }
        func attach() throws {
            socket?.close()
            let fresh = try Socket(context: context, type: .dealer)
            try fresh.setLinger(0)
            try fresh.setReceiveTimeout(50)
            try fresh.connect(endpoint)
            socket = fresh
            _ = try fresh.send(frames("CONSUME", "c", [Self.name, attachments == 0 ? "earliest" : "resume", "1000", "out/"]))
            attachments += 1
            note(.attached)
            consumeSent = clock.seconds
            ping = nil
            unacked = 0
            lastFrame = clock.seconds
        }
        func ack(_ seq: UInt64) throws {
            _ = try socket?.send(frames("ACK", "a", [Self.name, String(seq)]))
            note(.acked(seq: seq))
            _ = try socket?.send(frames("PING", "p\(seq)", []))
            ping = (seq, clock.seconds)
            unacked = 0
        }

        try attach()
        defer { socket?.close() }
        while true {
            let (pause, reattach, stop) = shared.withLock { state in
                defer { state.reattach = false }
                state.paused = state.wantPause
                return (state.wantPause, state.reattach, state.stop)
            }
            if pause {
                Thread.sleep(forTimeInterval: 0.005)
                continue
            }
            if reattach { try attach() }
            let now = clock.seconds
            if stop, stopping == nil {
                stopping = now
                if let lastDelivered { try ack(lastDelivered) }
            }
            if let stopping, ping == nil || now - stopping > 3 { return }
            if let received = try socket?.receive(), received.count >= 3 {
                lastFrame = clock.seconds
                switch String(decoding: received[1], as: UTF8.self) {
                case "EVT" where received.count == 6:
                    guard let seq = UInt64(String(decoding: received[3], as: UTF8.self)) else { continue }
                    note(.delivered(seq: seq, event: received[5]))
                    lastDelivered = seq
                    unacked += 1
                case "OK":
                    let corr = String(decoding: received[2], as: UTF8.self)
                    if corr == "c" { consumeSent = nil }
                    if corr.hasPrefix("p"), let seq = UInt64(corr.dropFirst()), seq == ping?.seq {
                        note(.ackTaken(seq: seq, at: clock.seconds))
                        ping = nil
                    }
                case "ERR", "END":
                    if stopping == nil { try attach() }
                default:
                    break
                }
                continue
            }
            let idle = clock.seconds - lastFrame
            if stopping != nil { continue }
            if let ping, clock.seconds - ping.at > 3 {
                try attach()
            } else if let sent = consumeSent, clock.seconds - sent > 3 {
                try attach()
            } else if ping == nil, unacked > 0, let lastDelivered, unacked >= 50 || idle > 0.1 {
                try ack(lastDelivered)
            } else if ping == nil, idle > 1 {
                // Idle: an ACK of the last event again tells whether this connection still holds
                // the consumer (ERR after a broker restart); with nothing to ACK, attach anew.
                if let lastDelivered { try ack(lastDelivered) } else { try attach() }
                lastFrame = clock.seconds
            }
        }
    }
}
