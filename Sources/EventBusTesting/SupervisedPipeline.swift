import EventBus
import EventBusBroker
import EventBusSupervisor
import Foundation
import Logging
import ZeroMQ

/// A supervisor in this process (in a task of its own) running real plugin executables
/// from the build folders, its data and endpoints in a temporary directory.
public final class SupervisedPipeline: @unchecked Sendable {
    public let directory = TemporaryDirectory.url("eventbus-sup").path
    public let supervisor: Supervisor
    public let context: Context
    /// Completed when the supervisor's `run()` has returned.
    private let done = Completion<Void>()

    /// The folder of `eventbus` and the built-in plugins.
    public static var binDirectory: String { BuildFolder.bus }
    /// The example plugins' folder (identity, counter): the examples/plugins package's build.
    public static var examplePluginDirectory: String { BuildFolder.example("plugins") }
    public static let examplePlugins: Set<String> = ["identity", "counter"]

    /// A stage running `executable`: a built-in plugin beside `eventbus`, or an example plugin.
    public static func plugin(_ name: String, executable: String, _ arguments: [String] = []) -> PipelineStage {
        let folder = examplePlugins.contains(executable) ? examplePluginDirectory : binDirectory
        return PipelineStage(name: name, launch: .process(executable: folder + "/" + executable, arguments: arguments + ["--log-level", "warning"]))
    }

    /// - Parameter logs: Where the supervisor's messages go, from `info` up; without it, only
    ///   its errors, to the console.
    public init(_ stages: [PipelineStage], logs: CapturingLogHandler? = nil,
                configure: (inout SupervisorConfig) -> Void = { _ in }) throws {
        for stage in stages {
            if case .process(let executable, _) = stage.launch, !FileManager.default.isExecutableFile(atPath: executable) {
                throw ProcessError("no executable \(executable): build it first (`make test` builds the bus and the examples)")
            }
        }
        var broker = BrokerConfig()
        broker.dataDirectory = directory
        broker.commandEndpoint = "ipc://\(directory)-command.sock"
        broker.streamEndpoint = "ipc://\(directory)-stream.sock"
        var config = SupervisorConfig(broker: broker, pipeline: try Pipeline(stages: stages))
        config.initialBackoff = .milliseconds(50)
        configure(&config)
        var logger = logs.map { logs in Logger(label: "test.supervisor") { _ in logs } } ?? Logger(label: "test.supervisor")
        logger.logLevel = logs == nil ? .error : .info
        supervisor = try Supervisor(config: config, logger: logger)
        context = try Context()
        let supervisor = self.supervisor, done = self.done
        Task {
            try? await supervisor.run()
            done.complete(())
        }
    }

    /// Stops the supervisor (and its plugins), waits for its run loop to end, at most
    /// `timeout`, and removes the data directory.
    public func stop(within timeout: Duration = .seconds(60)) async throws {
        await supervisor.stop()
        let ended = await done.wait(timeout: timeout) != nil
        try? FileManager.default.removeItem(atPath: directory)
        guard ended else { throw ProcessError("the supervisor did not stop within \(timeout)") }
    }

    /// Runs `body`, then ``stop(within:)``s whether `body` threw or not: the `defer` of a
    /// test whose cleanup must be awaited.
    public func stopAfter<T>(_ body: () async throws -> T) async throws -> T {
        try await awaitingCleanup(body) { _ = try await self.stop() }
    }

    /// Waits until every stage consumes (the supervisor's ready line).
    public func waitUntilReady(seconds: Double = 30) async throws {
        var patience = Patience(.seconds(seconds))
        while !supervisor.isReady {
            guard patience.allowsAnotherLook() else { throw ProcessError("pipeline not ready within \(seconds) s") }
            try await Task.sleep(for: .milliseconds(50))  // a poll interval
        }
    }

    /// Polls STATS until `condition` holds, at most `seconds`; the last STATS on success.
    @discardableResult
    public func waitForStats(_ what: String, seconds: Double = 20, _ condition: (JSONValue) -> Bool) async throws -> JSONValue {
        var patience = Patience(.seconds(seconds))
        while true {
            let stats = try stats()
            if condition(stats) { return stats }
            guard patience.allowsAnotherLook() else { throw ProcessError("\(what): not within \(seconds) s; STATS \(stats)") }
            try await Task.sleep(for: .milliseconds(20))  // a poll interval, not a wait for something to happen
        }
    }

    /// The consumer `name` of STATS, if known.
    public static func consumer(_ name: String, in stats: JSONValue) -> JSONValue? {
        guard case .array(let consumers)? = stats["consumers"] else { return nil }
        return consumers.first { $0["name"]?.stringValue == name }
    }

    public func peer(timeout: Int32 = 20_000) throws -> Socket {
        let socket = try Socket(context: context, type: .dealer)
        try socket.setLinger(0)
        try socket.setReceiveTimeout(timeout)
        try socket.connect(supervisor.commandEndpoint)
        return socket
    }

    public func call(_ socket: Socket, _ verb: String, _ arguments: [[UInt8]]) throws -> [[UInt8]] {
        try socket.send([Array("EB1".utf8), Array(verb.utf8), Array("c".utf8)] + arguments)
        while let frames = try socket.receive() {
            if frames.count >= 3 && frames[1] != Array("EVT".utf8) { return frames }
        }
        throw ProcessError("no reply to \(verb)")
    }

    public func stats() throws -> JSONValue {
        let socket = try peer()
        defer { socket.close() }
        return try JSONParser.parse(try call(socket, "STATS", []).last ?? [])
    }

    /// Reads `count` events of `prefix` from the start; returns their ids in SEQ order.
    public func readIDs(_ prefix: String, count: Int, consumer: String) throws -> [String] {
        let socket = try peer()
        defer { socket.close() }
        let attached = try call(socket, "CONSUME", [Array(consumer.utf8), Array("earliest".utf8), Array("65536".utf8), Array(prefix.utf8)])
        guard attached[1] == Array("OK".utf8) else {
            throw ProcessError("CONSUME refused: \(attached.dropFirst(3).map { String(decoding: $0, as: UTF8.self) })")
        }
        var ids: [String] = []
        while ids.count < count, let frames = try socket.receive() {
            guard frames.count == 6, frames[1] == Array("EVT".utf8) else { continue }
            ids.append(try EventValidator.validate(frames[5], stage: "any").envelope.id)
        }
        return ids
    }

    public static func event(_ n: Int, type: String = "message.read") -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"e\#(n)","source":"/test","type":"\#(type)","subject":"messaging:general","time":"2026-11-22T03:10:00.123Z","data":{"cid":"messaging:general","user_id":"bob","message_id":"m\#(n)"}}"#.utf8)
    }
}
