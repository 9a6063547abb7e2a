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
        var state = ObserverState(now: clock.seconds)
        var stopping = false
        defer { socket?.close() }

        func frames(_ verb: String, _ corr: String, _ arguments: [String]) -> [[UInt8]] {
            [Array("EB1".utf8), Array(verb.utf8), Array(corr.utf8)] + arguments.map { Array($0.utf8) }
        }
        /// Does what the state says; false once it says to finish.
        func perform(_ actions: [ObserverState.Action]) throws -> Bool {
            for action in actions {
                switch action {
                case .attach:
                    socket?.close()
                    let fresh = try Socket(context: context, type: .dealer)
                    try fresh.setLinger(0)
                    try fresh.setReceiveTimeout(50)
                    try fresh.connect(endpoint)
                    socket = fresh
                    _ = try fresh.send(frames("CONSUME", "c", [Self.name, state.startsEarliest ? "earliest" : "resume", "1000", "out/"]))
                    state.attached(now: clock.seconds)
                    note(.attached)
                case .ack(let seq):
                    _ = try socket?.send(frames("ACK", "a", [Self.name, String(seq)]))
                    note(.acked(seq: seq))
                    _ = try socket?.send(frames("PING", "p\(seq)", []))
                    state.acked(seq, now: clock.seconds)
                case .finish:
                    return false
                }
            }
            return true
        }

        _ = try perform([.attach])
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
            var actions: [ObserverState.Action] = reattach ? [.attach] : []
            if stop, !stopping {
                stopping = true
                actions += state.stop(now: clock.seconds)
            }
            guard try perform(actions) else { return }
            let now = { self.clock.seconds }
            if let received = try socket?.receive(), received.count >= 3 {
                let corr = String(decoding: received[2], as: UTF8.self)
                switch String(decoding: received[1], as: UTF8.self) {
                case "EVT" where received.count == 6:
                    guard let seq = UInt64(String(decoding: received[3], as: UTF8.self)) else { continue }
                    note(.delivered(seq: seq, event: received[5]))
                    actions = state.delivered(seq, now: now())
                case "OK" where corr == "c":
                    actions = state.consumeAnswered(now: now())
                case "OK" where corr.hasPrefix("p"):
                    let answer = state.pingAnswered(UInt64(corr.dropFirst()) ?? 0, now: now())
                    if answer.taken, let seq = UInt64(corr.dropFirst()) { note(.ackTaken(seq: seq, at: now())) }
                    actions = answer.actions
                case "ERR", "END":
                    actions = state.refused(now: now())
                default:
                    actions = state.tick(now: now())
                }
            } else {
                actions = state.tick(now: now())
            }
            guard try perform(actions) else { return }
        }
    }
}
