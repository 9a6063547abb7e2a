import EventBus
import Foundation
import Logging
import Testing
import ZeroMQ

@testable import EventBusBroker

/// A broker core on a fresh data directory with no socket: commands go in as
/// frames, what it sends comes out of an ``OutputRecording``, and its time is a
/// ``ManualClock``. Each ``pass()`` is one turn of the loop.
final class CoreHarness {
    let directory: String
    let output = OutputRecording()
    let clock = ManualClock()
    private(set) var core: BrokerCore
    private let config: BrokerConfig
    private let logger: Logger

    /// Under `--fsync off` unless `configure` says otherwise: the commit is then immediate.
    init(_ configure: (inout BrokerConfig) -> Void = { _ in }) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-core-\(UUID().uuidString)").path
        var config = BrokerConfig()
        config.dataDirectory = directory
        config.fsync = .off
        configure(&config)
        var logger = Logger(label: "test.core")
        logger.logLevel = .critical
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.config = config
        self.logger = logger
        core = try BrokerCore(config: config, logger: logger, output: output, clock: clock)
    }

    /// Closes the core as a clean stop does (commit, offsets saved) and opens a new one on its data.
    ///
    /// The lock file is opened `O_CLOEXEC`, but a process another test spawns
    /// at that moment holds a copy of its descriptor until its exec: the lock
    /// may stay taken for that long after the close, so the open is retried
    /// for up to two seconds.
    func restart() throws {
        core.close()
        let deadline = ContinuousClock.now + .seconds(2)
        while true {
            do {
                core = try BrokerCore(config: config, logger: logger, output: output, clock: clock)
                return
            } catch let error as LogError where error.kind == .locked && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.005)  // a poll interval: a child between fork and exec is gone in microseconds
            }
        }
    }

    /// Closes the core and removes its data directory.
    func close() {
        core.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Hands the core one command from `peer`, authenticated as `userID` (the ZAP user id) if given.
    func send(_ verb: String, _ arguments: [[UInt8]] = [], correlation: String = "c1", peer: String = "peer", userID: String? = nil) {
        core.handle([Array(peer.utf8), WireProtocol.signature, Array(verb.utf8), Array(correlation.utf8)] + arguments, userID: userID)
    }

    func send(_ verb: String, _ arguments: [String], correlation: String = "c1", peer: String = "peer", userID: String? = nil) {
        send(verb, arguments.map { Array($0.utf8) }, correlation: correlation, peer: peer, userID: userID)
    }

    /// One turn of the loop after the commands: commit (waiting for the fsync
    /// thread under `always`), feed the consumers, run the timers.
    func pass() throws {
        core.advanceCommit()
        if let worker = core.syncWorker {
            var poller = Poller()
            poller.add(fileDescriptor: worker.wakeup.fileDescriptor)
            while !core.inFlight.isEmpty {
                guard try poller.poll(timeoutMilliseconds: 10_000)[0].contains(.readable) else {
                    Issue.record("no fsync completed within 10 s")
                    return
                }
                core.finishCommits()
            }
        }
        core.pumpConsumers()
        core.runTimers()
    }

    /// The messages sent since the last call.
    func replies() -> [OutputRecording.Message] { output.take() }

    /// The one reply since the last call (recording an issue if there is not exactly one).
    func reply(sourceLocation: SourceLocation = #_sourceLocation) -> OutputRecording.Message? {
        let all = output.take()
        #expect(all.count == 1, "expected one reply, got \(all.map(\.verb))", sourceLocation: sourceLocation)
        return all.first
    }

    /// The code of the one reply, which must be an ERR.
    func errorCode(sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        guard let reply = reply(sourceLocation: sourceLocation) else { return nil }
        #expect(reply.verb == "ERR", "expected an ERR, got \(reply.verb) \(reply.arguments)", sourceLocation: sourceLocation)
        return reply.arguments.first
    }
}
