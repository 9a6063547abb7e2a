import EventBus
import EventBusBroker
import Foundation
import Testing
import Logging
import Synchronization
import ZeroMQ

/// A broker running in this process on ephemeral TCP ports and a fresh data directory.
final class TestBroker: @unchecked Sendable {
    let directory: String
    let config: BrokerConfig
    private(set) var broker: Broker
    private var thread: Thread?
    private let done = DispatchSemaphore(value: 0)
    /// What the last `run()` threw, if it threw.
    private let failure = Mutex<String?>(nil)
    /// Whether the test's thread has seen the last `run()` return (stop and restart use it only).
    private var joined = false
    let context: Context

    init(directory: String? = nil, configure: (inout BrokerConfig) -> Void = { _ in }) throws {
        let dir = directory ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("eventbus-test-\(UUID().uuidString)").path
        self.directory = dir
        var config = BrokerConfig()
        config.dataDirectory = dir
        config.commandEndpoint = "tcp://127.0.0.1:*"
        config.streamEndpoint = "tcp://127.0.0.1:*"
        config.pipeline = ["plugin-a"]
        configure(&config)
        self.config = config
        var logger = Logger(label: "test.broker")
        logger.logLevel = .warning
        broker = try Broker(config: config, logger: logger)
        context = try Context()
        start()
    }

    private func start() {
        let broker = self.broker
        let done = self.done
        failure.withLock { $0 = nil }
        joined = false
        let thread = Thread { [self] in
            do {
                try broker.run()
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
            done.signal()
        }
        thread.start()
        self.thread = thread
    }

    /// Stops the broker and waits until it has closed its log.
    func stop() {
        broker.stop()
        if !joined { done.wait() }
        joined = true
    }

    /// Waits until the broker has stopped by itself, at most `seconds`; true if it did.
    func waitUntilStopped(seconds: Double) -> Bool {
        if joined { return true }
        guard done.wait(timeout: .now() + seconds) == .success else { return false }
        joined = true
        return true
    }

    /// What the broker's `run()` threw, once it has returned; nil if it returned normally.
    var runError: String? { failure.withLock { $0 } }

    /// Stops, then starts a new broker on the same directory and configuration (ports change).
    func restart() throws {
        stop()
        var logger = Logger(label: "test.broker")
        logger.logLevel = .warning
        broker = try Broker(config: config, logger: logger)
        start()
    }

    /// A raw DEALER connected to the command socket.
    func peer() throws -> RawPeer { try RawPeer(context: context, endpoint: broker.commandEndpoint) }

    /// A SUB connected to the stream socket, returned once the broker counts its
    /// subscriptions (STATS `stream_subscriptions`), not after a fixed wait.
    func subscriber(_ prefixes: [String]) throws -> Socket {
        let before = try streamSubscriptions()
        let sub = try Socket(context: context, type: .sub)
        try sub.setReceiveTimeout(2_000)
        try sub.setLinger(0)
        for prefix in prefixes { try sub.subscribe(Array(prefix.utf8)) }
        try sub.connect(broker.streamEndpoint)
        let deadline = Date().addingTimeInterval(10)
        while try streamSubscriptions() < before + prefixes.count {
            guard Date() < deadline else { throw LogError(.io, "the stream subscriptions never reached the broker") }
            Thread.sleep(forTimeInterval: 0.005)  // a poll interval
        }
        return sub
    }

    /// STATS `stream_subscriptions`: the distinct prefixes the XPUB has been told of.
    func streamSubscriptions() throws -> Int {
        try peer().call("STATS").json["stream_subscriptions"] as? Int ?? -1
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A peer speaking EB1 frame by frame, for tests that check the wire exactly.
final class RawPeer {
    let socket: Socket
    private var counter = 0

    init(context: Context, endpoint: String) throws {
        socket = try Socket(context: context, type: .dealer)
        try socket.setReceiveTimeout(3_000)
        try socket.setLinger(0)
        try socket.connect(endpoint)
    }

    /// Sends raw frames (signature included).
    func sendRaw(_ frames: [[UInt8]]) throws { try socket.send(frames) }

    /// Sends `verb` with a fresh CORR and arguments; returns the CORR.
    @discardableResult
    func send(_ verb: String, _ arguments: [[UInt8]] = []) throws -> [UInt8] {
        counter += 1
        let correlation = Array("c\(counter)".utf8)
        try socket.send([Array("EB1".utf8), Array(verb.utf8), correlation] + arguments)
        return correlation
    }

    /// The next message, or nil after the receive timeout.
    func receive() throws -> [[UInt8]]? { try socket.receive() }

    /// Sends and waits for the reply with the same CORR (skipping EVT/END pushes).
    func call(_ verb: String, _ arguments: [[UInt8]] = []) throws -> Reply {
        let correlation = try send(verb, arguments)
        while let frames = try receive() {
            if frames.count >= 3 && frames[2] == correlation { return Reply(frames: frames) }
        }
        return Reply(frames: [])
    }

    func call(_ verb: String, _ arguments: [String]) throws -> Reply {
        try call(verb, arguments.map { Array($0.utf8) })
    }

    /// The messages that reached this peer before the answer to a PING sent now.
    ///
    /// The broker answers the PING in a later pass than anything it already sent this
    /// peer, on the same connection, which keeps order: an empty result proves nothing was
    /// sent before, however slow the machine (a positive control, where waiting a fixed
    /// time for "nothing" would pass on a machine too slow to have sent it yet).
    func messagesBeforeControl() throws -> [[[UInt8]]] {
        let correlation = try send("PING")
        var before: [[[UInt8]]] = []
        while let frames = try receive() {
            if frames.count >= 3 && frames[2] == correlation { return before }
            before.append(frames)
        }
        Issue.record("the control PING got no answer")
        return before
    }
}

/// A reply as frames, with helpers.
struct Reply {
    let frames: [[UInt8]]
    var isOK: Bool { frames.count >= 2 && frames[1] == Array("OK".utf8) }
    var code: String? { frames.count >= 5 && frames[1] == Array("ERR".utf8) ? String(decoding: frames[3], as: UTF8.self) : nil }
    var message: String { frames.count >= 5 ? String(decoding: frames[4], as: UTF8.self) : "" }
    /// Arguments after CORR, as strings.
    var values: [String] { frames.dropFirst(3).map { String(decoding: $0, as: UTF8.self) } }
    var json: [String: Any] {
        guard isOK, let last = frames.last,
              let object = try? JSONSerialization.jsonObject(with: Data(last)) as? [String: Any] else { return [:] }
        return object
    }
}

/// Builds test events.
enum Events {
    static func make(type: String, subject: String, data: String, id: String = UUID().uuidString,
                     source: String = "/test") -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"\#(id)","source":"\#(source)","type":"\#(type)","subject":"\#(subject)","time":"2026-11-22T03:10:00.123Z","data":\#(data)}"#.utf8)
    }

    static func read(cid: String = "messaging:general", user: String = "bob", message: String = "m1",
                     id: String = UUID().uuidString) -> [UInt8] {
        make(type: "message.read", subject: cid,
             data: #"{"cid":"\#(cid)","user_id":"\#(user)","message_id":"\#(message)"}"#, id: id)
    }

    static func userUpdated(_ user: String, readReceipts: Bool, id: String = UUID().uuidString) -> [UInt8] {
        make(type: "user.updated", subject: "@\(user)",
             data: #"{"user":{"id":"\#(user)","privacy_settings":{"read_receipts":{"enabled":\#(readReceipts)}}}}"#, id: id)
    }
}
