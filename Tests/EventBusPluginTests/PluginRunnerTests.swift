import EventBus
import EventBusBroker
@testable import EventBusPlugin
import Foundation
import Logging
import Testing
import ZeroMQ

/// Passes every event on unchanged.
struct Identity: Plugin {
    let name: String
    func handle(_ event: PluginEvent, state: inout NoState, output: inout PluginOutput) throws {
        output.pass(event)
    }
}

/// Counts events by type, emits a `counter.tick` per event, answers service `counter`,
/// and fails on purpose at one SEQ to stand in for a crash.
struct Counter: Plugin {
    struct Counts: PluginState, Equatable {
        var byType: [String: Int] = [:]
        init() {}
        init(snapshot: [UInt8]) throws {
            let object = try JSONParser.parse(snapshot)
            guard case .object(let members) = object else { throw PluginError("bad counter snapshot") }
            for (key, value) in members { byType[key] = Int(value.int64Value ?? 0) }
        }
        func snapshot() -> [UInt8] {
            var w = JSONWriter()
            w.beginObject()
            for (key, value) in byType.sorted(by: { $0.key < $1.key }) { w.key(key); w.int(value) }
            w.endObject()
            return w.bytes
        }
    }

    let name = "counter"
    var services: [String] { ["counter"] }
    let failAt: UInt64?
    func initialState() -> Counts { Counts() }

    func handle(_ event: PluginEvent, state: inout Counts, output: inout PluginOutput) throws {
        if event.seq == failAt { throw PluginError("crash on purpose at \(event.seq)") }
        if let query = QueryEvent(event) {
            var w = JSONWriter()
            w.beginObject()
            w.key("count"); w.int(state.byType[query.params["type"]?.stringValue ?? ""] ?? 0)
            w.endObject()
            output.reply(to: query, result: w.bytes)
            return
        }
        state.byType[String(event.type), default: 0] += 1
        output.pass(event)
        output.emit(type: "counter.tick", subject: String(event.subject), data: Array(#"{"n":\#(state.byType[String(event.type)] ?? 0)}"#.utf8), time: nil)
    }
}

/// A broker in this process plus helpers to run plugins against it.
final class PluginHarness: @unchecked Sendable {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("plugin-test-\(UUID().uuidString)").path
    let broker: Broker
    let context: Context
    private let done = DispatchSemaphore(value: 0)

    init(pipeline: [String]) throws {
        var config = BrokerConfig()
        config.dataDirectory = directory + "/bus"
        config.commandEndpoint = "tcp://127.0.0.1:*"
        config.streamEndpoint = "tcp://127.0.0.1:*"
        config.pipeline = pipeline
        config.services = []
        var logger = Logger(label: "test.broker")
        logger.logLevel = .warning
        broker = try Broker(config: config, logger: logger)
        context = try Context()
        let broker = self.broker, done = self.done
        Thread { try? broker.run(); done.signal() }.start()
    }

    func stop() {
        broker.stop()
        done.wait()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func configuration(_ name: String, input: String, output: String) -> PluginConfiguration {
        var configuration = PluginConfiguration(name: name, inputStage: input, outputStage: output,
                                                commandEndpoint: broker.commandEndpoint,
                                                dataDirectory: directory + "/plugins/" + name)
        configuration.batchSize = 100
        return configuration
    }

    /// Runs `runner` on a thread; the returned semaphore is signalled when it ends, with its error.
    func start<P: Plugin>(_ runner: PluginRunner<P>) -> (DispatchSemaphore, ErrorBox) {
        let ended = DispatchSemaphore(value: 0)
        let box = ErrorBox()
        Thread {
            do { try runner.run() } catch { box.error = "\(error)" }
            ended.signal()
        }.start()
        return (ended, box)
    }

    func peer() throws -> Socket {
        let socket = try Socket(context: context, type: .dealer)
        try socket.setLinger(0)
        try socket.setReceiveTimeout(10_000)
        try socket.connect(broker.commandEndpoint)
        return socket
    }

    /// Publishes events to `in` and returns their SEQs.
    func publish(_ events: [[UInt8]]) throws -> [String] {
        let socket = try peer()
        defer { socket.close() }
        try socket.send([Array("EB1".utf8), Array("PUB".utf8), Array("p".utf8), Array("in".utf8)] + events)
        return (try socket.receive() ?? []).dropFirst(3).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Reads `count` events of `prefix` from the start with a durable consumer: (SEQ, id, type).
    func read(_ prefix: String, count: Int, consumer: String = "reader") throws -> [(seq: UInt64, id: String, type: String)] {
        let socket = try peer()
        defer { socket.close() }
        try socket.send([Array("EB1".utf8), Array("CONSUME".utf8), Array("c".utf8), Array(consumer.utf8),
                         Array("earliest".utf8), Array("65536".utf8), Array(prefix.utf8)])
        var events: [(UInt64, String, String)] = []
        while events.count < count, let frames = try socket.receive() {
            guard frames.count == 6, frames[1] == Array("EVT".utf8) else { continue }
            let envelope = try EventValidator.validate(frames[5], stage: "any").envelope
            events.append((UInt64(String(decoding: frames[3], as: UTF8.self)) ?? 0, envelope.id, envelope.type))
        }
        return events
    }

    /// The broker's STATS.
    func stats() throws -> JSONValue {
        let socket = try peer()
        defer { socket.close() }
        try socket.send([Array("EB1".utf8), Array("STATS".utf8), Array("s".utf8)])
        return try JSONParser.parse(try #require(try socket.receive()).last ?? [])
    }

    static func event(_ n: Int) -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"e\#(n)","source":"/test","type":"message.read","subject":"messaging:general","time":"2026-11-22T03:10:00.123Z","data":{"cid":"messaging:general","user_id":"bob","message_id":"m\#(n)"}}"#.utf8)
    }
}

final class ErrorBox: @unchecked Sendable {
    var error: String?
}

@Suite(.serialized) struct PluginRunnerTests {
    let logger: Logger = {
        var logger = Logger(label: "test.plugin")
        logger.logLevel = .warning
        return logger
    }()

    @Test func identityPassesEveryEventOnInLogOrderWithItsId() throws {
        let harness = try PluginHarness(pipeline: ["identity"])
        defer { harness.stop() }
        let runner = try PluginRunner(plugin: Identity(name: "identity"),
                                      configuration: harness.configuration("identity", input: "in", output: "out"), logger: logger)
        let (ended, _) = harness.start(runner)
        #expect(try harness.publish((0..<500).map(PluginHarness.event)).count == 500)
        let out = try harness.read("out/", count: 500)
        #expect(out.map(\.id) == (0..<500).map { "e\($0)" })
        runner.stop()
        ended.wait()
        // Each was passed on by reference (`@SEQ`), as the broker offers in HELLO.
        #expect(try harness.stats()["forwarded"]?.int64Value == 500)
    }

    @Test func passedEventsGoByReferenceOnlyToABrokerThatOffersIt() throws {
        let passed = OutgoingEvent(bytes: PluginHarness.event(1), passedSeq: 1_234_567)
        #expect(passed.frame(byReference: true) == Array("@1234567".utf8))
        #expect(passed.frame(byReference: false) == PluginHarness.event(1))
        #expect(OutgoingEvent(bytes: [1, 2]).frame(byReference: true) == [1, 2])
        #expect(WireProtocol.helloFeatures(Array(#"{"features":["batch","forward","pubs"]}"#.utf8)) == ["batch", "forward", "pubs"])
        #expect(WireProtocol.helloFeatures(Array(#"{"version":"0.1"}"#.utf8)).isEmpty)
        // RunnerStateTests: the runner sends `@SEQ` only after a HELLO that lists `forward`.
    }

    @Test func aRunnerRunsOnOneThreadAtATime() throws {
        let harness = try PluginHarness(pipeline: ["identity"])
        defer { harness.stop() }
        let runner = try PluginRunner(plugin: Identity(name: "identity"),
                                      configuration: harness.configuration("identity", input: "in", output: "out"), logger: logger)
        let (ended, _) = harness.start(runner)
        #expect(try harness.publish((0..<10).map(PluginHarness.event)).count == 10)
        _ = try harness.read("out/", count: 10)
        #expect(throws: PluginError.self) { try runner.run() }
        runner.stop()
        ended.wait()
        #expect(runner.lastAppliedSeq == 10)
    }

    @Test func emittedEventsGetDeterministicIdsFromTheInputSeq() throws {
        let harness = try PluginHarness(pipeline: ["counter"])
        defer { harness.stop() }
        let runner = try PluginRunner(plugin: Counter(failAt: nil),
                                      configuration: harness.configuration("counter", input: "in", output: "out"), logger: logger)
        let (ended, _) = harness.start(runner)
        #expect(try harness.publish((0..<3).map(PluginHarness.event)) == ["1", "2", "3"])
        let out = try harness.read("out/", count: 6)
        #expect(out.map(\.id) == ["e0", "counter:1:0", "e1", "counter:2:0", "e2", "counter:3:0"])
        runner.stop()
        ended.wait()
    }

    @Test func crashBeforeCommitReplaysAndTheOutputStageHasNoDuplicates() throws {
        let harness = try PluginHarness(pipeline: ["counter"])
        defer { harness.stop() }
        #expect(try harness.publish((0..<300).map(PluginHarness.event)).count == 300)
        // First run: fails at SEQ 250, after publishing outputs for earlier batches.
        let first = try PluginRunner(plugin: Counter(failAt: 250),
                                     configuration: harness.configuration("counter", input: "in", output: "out"), logger: logger)
        let (firstEnded, firstError) = harness.start(first)
        firstEnded.wait()
        #expect(firstError.error?.contains("crash on purpose") == true)
        // Second run resumes from the committed state and replays the rest.
        let second = try PluginRunner(plugin: Counter(failAt: nil),
                                      configuration: harness.configuration("counter", input: "in", output: "out"), logger: logger)
        let (secondEnded, _) = harness.start(second)
        let out = try harness.read("out/", count: 600)
        let expected = (0..<300).flatMap { ["e\($0)", "counter:\($0 + 1):0"] }
        #expect(out.map(\.id) == expected)
        second.stop()
        secondEnded.wait()
        // Nothing more than the 600 events reached `out`.
        let stats = try harness.peer()
        try stats.send([Array("EB1".utf8), Array("STATS".utf8), Array("s".utf8)])
        let json = try JSONParser.parse(try #require(try stats.receive()).last ?? [])
        #expect(json["stages"]?["out"]?.int64Value == 600)
    }

    @Test func stateSurvivesARestartAndAnswersQueries() throws {
        let harness = try PluginHarness(pipeline: ["counter"])
        defer { harness.stop() }
        #expect(try harness.publish((0..<20).map(PluginHarness.event)).count == 20)
        let first = try PluginRunner(plugin: Counter(failAt: nil),
                                     configuration: harness.configuration("counter", input: "in", output: "out"), logger: logger)
        let (firstEnded, _) = harness.start(first)
        _ = try harness.read("out/", count: 40)
        first.stop()
        firstEnded.wait()
        #expect(first.lastAppliedSeq == 20)

        let second = try PluginRunner(plugin: Counter(failAt: nil),
                                      configuration: harness.configuration("counter", input: "in", output: "out"), logger: logger)
        let (secondEnded, _) = harness.start(second)
        let requester = try harness.peer()
        try requester.send([Array("EB1".utf8), Array("HELLO".utf8), Array("h".utf8), Array(#"{"services":["counter"]}"#.utf8)])
        _ = try requester.receive()
        try requester.send([Array("EB1".utf8), Array("REQ".utf8), Array("q".utf8), Array("counter".utf8),
                            Array(#"{"method":"count","params":{"type":"message.read"}}"#.utf8)])
        let reply = try #require(try requester.receive())
        #expect(String(decoding: reply[1], as: UTF8.self) == "OK")
        #expect(String(decoding: reply.last ?? [], as: UTF8.self) == #"{"count":20}"#)
        second.stop()
        secondEnded.wait()
    }

    @Test func twoStagesPreserveLogOrderEndToEnd() throws {
        let harness = try PluginHarness(pipeline: ["first", "second"])
        defer { harness.stop() }
        let first = try PluginRunner(plugin: Identity(name: "first"),
                                     configuration: harness.configuration("first", input: "in", output: "first"), logger: logger)
        let second = try PluginRunner(plugin: Identity(name: "second"),
                                      configuration: harness.configuration("second", input: "first", output: "out"), logger: logger)
        let (firstEnded, _) = harness.start(first)
        let (secondEnded, _) = harness.start(second)
        var expected: [String] = []
        for round in 0..<5 {
            let events = (0..<100).map { PluginHarness.event(round * 100 + $0) }
            #expect(try harness.publish(events).count == 100)
            expected += (0..<100).map { "e\(round * 100 + $0)" }
        }
        #expect(try harness.read("out/", count: 500).map(\.id) == expected)
        first.stop()
        second.stop()
        firstEnded.wait()
        secondEnded.wait()
    }
}
