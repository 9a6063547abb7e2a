import EventBus
import EventBusTesting
import Foundation
import Glibc
import Testing
import ZeroMQ

/// With CURVE on, an event's JSON never crosses loopback in clear; with it
/// off (the control, proving the check can fail) it does.
@Suite(.serialized) struct SecurityWireTests {
    /// The loopback address the brokers of this suite listen on: nobody else
    /// uses it, so the capture holds only their connections (another test's
    /// client may well get one of these port numbers as its source port on
    /// 127.0.0.1, and send its own events in clear).
    static let host = "127.0.0.2"

    /// Captures loopback TCP to and from ``host`` on `ports` with tcpdump until `stop()`.
    final class Capture {
        let file: URL
        let process: RunningProcess
        private let log: URL

        init(ports: [Int]) async throws {
            let stem = TemporaryDirectory.url("eventbus-wire")
            file = stem.appendingPathExtension("pcap")
            log = stem.appendingPathExtension("log")
            let tcpdump = ["/usr/bin/tcpdump", "/usr/sbin/tcpdump", "/sbin/tcpdump"].first { FileManager.default.isExecutableFile(atPath: $0) }
            process = try RunningProcess(
                try #require(tcpdump, "tcpdump is not installed (scripts/ensure-deps.sh --test installs it)"),
                ["-i", "lo", "-U", "-s", "0", "-w", file.path]
                    + "host \(SecurityWireTests.host) and (\(ports.map { "tcp port \($0)" }.joined(separator: " or ")))"
                        .split(separator: " ").map(String.init),
                standardError: .file(log.path))
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline, process.isRunning, !((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("listening on") {
                try await Task.sleep(for: .milliseconds(50))  // a poll interval
            }
            guard process.isRunning else { throw ProcessError("tcpdump exited: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")") }
        }

        /// Writes a clear-text sentinel to `port` over a plain TCP connection,
        /// waits until tcpdump has written it (loopback packets are captured in
        /// the order sent, so everything before it is in the file too), stops
        /// tcpdump and returns what it captured. A fixed quiet period is not
        /// enough: on a loaded machine tcpdump can lag by more than a second.
        func stop(sentinelPort port: Int) async throws -> [UInt8] {
            let sentinel = "capture-end-\(UUID().uuidString)"
            try Self.send(sentinel, to: SecurityWireTests.host, port: port)
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(60)
            var bytes: [UInt8] = []
            while clock.now < deadline {
                bytes = Array((try? Data(contentsOf: file)) ?? Data())
                if SecurityWireTests.contains(bytes, sentinel) { break }
                try await Task.sleep(for: .milliseconds(50))  // a poll interval
            }
            // SIGKILL, because the child inherits the test thread's blocked
            // signals (SIGINT, SIGTERM); with -U each packet is already written.
            try await process.kill()
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(at: log)
            #expect(SecurityWireTests.contains(bytes, sentinel), "tcpdump never wrote the sentinel (\(bytes.count) bytes)")
            return bytes
        }

        /// One connection that sends `text` and closes; the peer (a ZeroMQ
        /// socket) refuses the bad greeting, which is all the test needs.
        static func send(_ text: String, to host: String, port: Int) throws {
            let handle = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(handle) }
            var target = sockaddr_in()
            target.sin_family = sa_family_t(AF_INET)
            target.sin_port = UInt16(port).bigEndian
            inet_pton(AF_INET, host, &target.sin_addr)
            let connected = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(handle, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw ProcessError("could not connect to \(host):\(port) for the capture's sentinel") }
            let bytes = Array(text.utf8)
            let sent = bytes.withUnsafeBytes { Glibc.send(handle, $0.baseAddress, $0.count, 0) }
            guard sent == bytes.count else { throw ProcessError("the capture's sentinel was not sent") }
        }
    }

    /// Publishes one event carrying `marker` to `in` and one to `out`, and reads the `out` one from the stream.
    static func publish(marker: String, command: Socket, stream: Socket) throws {
        for round in 0..<40 {
            for stage in ["in", "out"] {
                #expect(try outcome(command, ["EB1", "PUB", "w\(round)\(stage)", stage],
                                    events: [securityEvent("wire-\(round)-\(stage)", marker: marker)]) == "OK")
            }
            if let frames = try stream.receive(), String(decoding: frames[2], as: UTF8.self).contains(marker) { return }
        }
        Issue.record("the event never reached the stream")
    }

    static func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let needle = Array(needle.utf8)
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    @Test func withCurveNoEventJSONCrossesTheWireInClear() async throws {
        let ports = try EphemeralEndpoint.freePorts(2)
        let capture = try await Capture(ports: ports)
        let bus = try await SecureBus(command: "tcp://\(Self.host):\(ports[0])", stream: "tcp://\(Self.host):\(ports[1])")
        try await bus.broker.terminateAfter {
            let command = try bus.peer("admin")
            let stream = try Socket(context: bus.context, type: .sub)
            defer { command.close(); stream.close() }
            try stream.setLinger(0)
            try stream.setReceiveTimeout(200)
            try bus.clientKeys("admin").apply(to: stream)
            try stream.subscribe([])
            try stream.connect(bus.broker.streamEndpoint)
            let marker = "wire-marker-\(UUID().uuidString)"
            try Self.publish(marker: marker, command: command, stream: stream)
            let bytes = try await capture.stop(sentinelPort: ports[0])
            #expect(Self.contains(bytes, "CURVE"), "the capture did not see the connections (\(bytes.count) bytes)")
            #expect(!Self.contains(bytes, marker), "the event's marker crossed the wire in clear")
            #expect(!Self.contains(bytes, "messaging:general"))
        }
    }

    @Test func withoutCurveTheSameCheckSeesTheJSON() async throws {
        let ports = try EphemeralEndpoint.freePorts(2)
        let capture = try await Capture(ports: ports)
        let context = try Context()
        let broker = try BrokerProcess(arguments: ["--log-level", "warning"],
                                       command: "tcp://\(Self.host):\(ports[0])", stream: "tcp://\(Self.host):\(ports[1])")
        try await broker.start(context: context)
        try await broker.terminateAfter {
            let command = try Socket(context: context, type: .dealer)
            let stream = try Socket(context: context, type: .sub)
            defer { command.close(); stream.close() }
            try command.setLinger(0)
            try command.setReceiveTimeout(3_000)
            try command.connect(broker.commandEndpoint)
            try stream.setLinger(0)
            try stream.setReceiveTimeout(200)
            try stream.subscribe([])
            try stream.connect(broker.streamEndpoint)
            let marker = "wire-marker-\(UUID().uuidString)"
            try Self.publish(marker: marker, command: command, stream: stream)
            let bytes = try await capture.stop(sentinelPort: ports[0])
            #expect(Self.contains(bytes, marker), "the control capture did not see the event in clear (\(bytes.count) bytes)")
        }
    }
}
