import EventBus
@testable import EventBusJetStream
import Foundation
import Glibc
import Logging
import NATS
import Testing
import ZeroMQ

/// The `in` stream's leader cut off from the two other servers by the network, each node
/// in a network namespace of its own (``NetworkLab``) with a gateway beside it: both
/// directions cut, only what the leader sends, and only what it hears.
///
/// While cut, a publisher on the leader's side (its gateway) gets no OK (`busy`, never a
/// hang), while one on the majority's side gets OKs again once a new leader is elected.
/// Once healed, the minority's publisher sends its unanswered PUBs again, and every node,
/// made leader in turn, holds the same stream: each event once, each confirmed one at its
/// SEQ, each publisher's events in its order.
@Suite(.serialized) struct PartitionTests {
    enum Cut: String, CaseIterable, Sendable { case bothWays, leaderCannotSend, leaderCannotHear }

    @Test(arguments: Cut.allCases) func aLeaderCutOffConfirmsNothingAndNothingDivergesOnceHealed(cut: Cut) async throws {
        let lab = try NetworkLab(nodes: 3)
        let bus = try LabBus(lab: lab)
        defer { bus.stop() }
        let logger = Logger(label: "test.partition")
        let stream = StageStream(stage: "in").name
        let connection = try lab.inHub {
            try Connection(ConnectOptions(servers: (1...3).map { bus.url($0) }, maxReconnect: -1, reconnectWait: .milliseconds(200)))
        }
        defer { connection.close() }
        let jetStream = try JetStream(connection: connection, options: JetStreamOptions(requestTimeout: .seconds(2)))
        let context = try Context()
        let publishers = try (1...3).map { try LabPublisher(context: context, endpoint: bus.endpoint($0)) }
        logger.notice("servers and gateways started", metadata: ["test.cut": "\(cut.rawValue)", "test.lab": "\(lab.name)"])

        // Every gateway confirms before the cut.
        var confirmed: [String: UInt64] = [:]
        var order: [String: [String]] = [:]  // each publisher's ids, in publish order
        for node in 1...3 {
            let ids = (0..<50).map { "w\(node)-\($0)" }
            for chunk in stride(from: 0, to: ids.count, by: 10) {
                let part = Array(ids[chunk..<chunk + 10])
                try publishUntilConfirmed(part, through: publishers[node - 1], into: &confirmed, deadline: .seconds(60), bus: bus)
            }
            order["w\(node)", default: []] += ids
            logger.notice("gateway confirms", metadata: ["test.node": "\(node)"])
        }

        let leaderName = try #require(try jetStream.streamInfo(stream).leader)
        let leader = try #require(Int(leaderName.dropFirst()))
        let majority = try #require((1...3).first { $0 != leader })
        let others = (1...3).filter { $0 != leader }
        for other in others {
            if cut != .leaderCannotHear { try lab.cut(from: leader, to: other) }
            if cut != .leaderCannotSend { try lab.cut(from: other, to: leader) }
        }
        let clock = ContinuousClock()
        let cutAt = clock.now
        logger.notice("cut", metadata: ["test.cut": "\(cut.rawValue)", "nats.leader": "\(leaderName)"])

        // The minority's side: a PUB right after the cut, and four once the majority has
        // moved on, none confirmed.
        var unanswered: [[String]] = []
        func minorityPublishes(_ batch: Int) throws {
            let ids = (0..<10).map { "p\(batch)-\($0)" }
            order["p", default: []] += ids
            let answer = try publishers[leader - 1].publish(ids)
            switch answer {
            case .confirmed(let seqs):
                Issue.record("the cut-off leader's side confirmed \(ids.first!)… at SEQ \(seqs.first ?? 0) during the \(cut) cut")
            case .refused(let code):
                #expect(code == "busy", "the minority's PUB was answered \(code)")
            }
            unanswered.append(ids)
        }
        try minorityPublishes(0)

        // The majority's side confirms again, after an election.
        var firstConfirmAfterCut: Duration?
        var majorityIDs: [String] = []
        for batch in 0..<20 {
            let ids = (0..<10).map { "a\(batch)-\($0)" }
            try publishUntilConfirmed(ids, through: publishers[majority - 1], into: &confirmed, deadline: .seconds(90), bus: bus)
            if firstConfirmAfterCut == nil { firstConfirmAfterCut = clock.now - cutAt }
            majorityIDs += ids
        }
        order["a"] = majorityIDs
        // Asked on the majority's side: the cut-off leader may still think it leads (until it
        // sees it lost its quorum), and the hub reaches it.
        let majorityURL = bus.url(majority)
        let majoritySide = try lab.inHub { try Connection(ConnectOptions(servers: [majorityURL], allowReconnect: false)) }
        let newLeader = try JetStream(connection: majoritySide, options: JetStreamOptions(requestTimeout: .seconds(2))).streamInfo(stream).leader
        majoritySide.close()
        #expect(newLeader != leaderName, "the cut-off \(leaderName) still leads \(stream) as \(majorityURL) sees it")
        for batch in 1...4 { try minorityPublishes(batch) }

        try lab.heal()
        let healedAt = clock.now
        // The minority's publisher sends what went unanswered again, in order; the stream's
        // dedup keeps one copy of any that the cut-off side had stored.
        for ids in unanswered {
            try publishUntilConfirmed(ids, through: publishers[leader - 1], into: &confirmed, deadline: .seconds(90), bus: bus)
        }
        let minorityBackAfter = clock.now - healedAt
        for node in 1...3 {
            let ids = (0..<20).map { "h\(node)-\($0)" }
            try publishUntilConfirmed(Array(ids[..<10]), through: publishers[node - 1], into: &confirmed, deadline: .seconds(60), bus: bus)
            try publishUntilConfirmed(Array(ids[10...]), through: publishers[node - 1], into: &confirmed, deadline: .seconds(60), bus: bus)
            order["h\(node)", default: []] += ids
        }
        logger.notice("healed", metadata: [
            "test.cut": "\(cut.rawValue)", "nats.old_leader": "\(leaderName)", "nats.new_leader": "\(newLeader ?? "none")",
            "test.majority_confirms_after_ms": "\(firstConfirmAfterCut?.milliseconds ?? -1)",
            "test.minority_confirms_after_heal_ms": "\(minorityBackAfter.milliseconds)",
        ])

        // Every node, made leader in turn, holds the same stream.
        let expected = Set(order.values.flatMap { $0 })
        var copies: [String: [String]] = [:]
        for node in 1...3 {
            try await FailoverTests().makeLeader("n\(node)", stream: stream, jetStream: jetStream, connection: connection)
            let ids = try FailoverTests().readAll(stream, jetStream: jetStream, durable: "check-n\(node)")
            copies["n\(node)"] = ids
            #expect(ids.count == expected.count, "n\(node) holds \(ids.count) events, \(expected.count) were published")
            #expect(Set(ids) == expected, "n\(node): \(expected.subtracting(ids).count) missing, \(Set(ids).subtracting(expected).count) unexpected")
            for (index, id) in ids.enumerated() where confirmed[id] != nil {
                #expect(confirmed[id] == UInt64(index + 1), "on n\(node), \(id) confirmed as \(confirmed[id]!), stored at \(index + 1)")
            }
            let position = Dictionary(ids.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { first, _ in first })
            for (publisher, sent) in order {
                let positions = sent.compactMap { position[$0] }
                #expect(positions == positions.sorted(), "on n\(node), \(publisher)'s events are out of publish order")
            }
        }
        #expect(copies["n1"] == copies["n2"] && copies["n2"] == copies["n3"], "the replicas differ")
    }

    /// Sends `ids` as one PUB, again after each `busy`, until it is confirmed.
    func publishUntilConfirmed(_ ids: [String], through publisher: LabPublisher, into confirmed: inout [String: UInt64],
                               deadline: Duration, bus: LabBus) throws {
        let clock = ContinuousClock()
        let end = clock.now + deadline
        while true {
            try bus.checkRunning()
            switch try publisher.publish(ids) {
            case .confirmed(let seqs):
                for (id, seq) in zip(ids, seqs) { confirmed[id] = seq }
                return
            case .refused(let code):
                #expect(code == "busy", "\(ids[0])… answered \(code)")
                guard clock.now < end else { throw TestFailure("\(ids[0])… not confirmed within \(deadline)") }
                Thread.sleep(forTimeInterval: 0.05)  // a poll interval between resends
            }
        }
    }
}

/// Three nats-servers, each in its node's namespace on `10.213.0.K:4222`, and an `eventbus
/// gateway` beside each, connected to its own server only and bound to an `ipc://` socket.
final class LabBus: Sendable {
    let lab: NetworkLab
    let directory: String
    private let processes: [Process]

    init(lab: NetworkLab) throws {
        self.lab = lab
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-netns-\(lab.name)").path
        let binary = try ServerBinary.find()
        let routes = (1...lab.nodes).map { "nats-route://\(lab.address($0)):6222" }
        var started: [Process] = []
        do {
            for node in 1...lab.nodes {
                let config = NodeConfig(name: "n\(node)", host: lab.address(node), clientPort: 4222, routePort: 6222, routes: routes,
                                        directory: "\(directory)/n\(node)", syncAlways: false, nodeCount: lab.nodes)
                try FileManager.default.createDirectory(atPath: config.storeDirectory, withIntermediateDirectories: true)
                try Data(config.configText.utf8).write(to: URL(fileURLWithPath: config.configPath))
                started.append(try lab.launch(in: node, binary, ["-c", config.configPath], log: "\(directory)/n\(node)/stdout"))
            }
            try Self.waitForMetaLeader(lab: lab, urls: (1...lab.nodes).map { "nats://\(lab.address($0)):4222" })
            for node in 1...lab.nodes {
                let arguments = ["gateway", "--backend", "nats://\(lab.address(node)):4222", "--endpoint", "ipc://\(directory)/gw\(node).sock",
                                 "--replicas", "3", "--log-level", "warning"]
                started.append(try lab.launch(in: node, GatewayProcessTests.binary, arguments, log: "\(directory)/gw\(node).log"))
            }
        } catch {
            for process in started where process.isRunning { kill(process.processIdentifier, SIGKILL) }
            throw error
        }
        processes = started
    }

    /// Throws, with the end of its log, when a server or a gateway has exited.
    func checkRunning() throws {
        for (index, process) in processes.enumerated() where !process.isRunning {
            let node = index % lab.nodes + 1
            let log = index < lab.nodes ? "\(directory)/n\(node)/server.log" : "\(directory)/gw\(node).log"
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw TestFailure("\(index < lab.nodes ? "nats-server n" : "gateway gw")\(node) exited (\(process.terminationStatus)): \(text.suffix(400))")
        }
    }

    func url(_ node: Int) -> String { "nats://\(lab.address(node)):4222" }
    func endpoint(_ node: Int) -> String { "ipc://\(directory)/gw\(node).sock" }

    func stop() {
        for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        for process in processes { process.waitUntilExit() }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Polls each server from the hub (`LocalCluster.probe`, as `cluster up` waits) until
    /// JetStream has a meta leader on every one.
    static func waitForMetaLeader(lab: NetworkLab, urls: [String]) throws {
        let deadline = Date().addingTimeInterval(60)
        var pending = urls
        while !pending.isEmpty {
            pending = try lab.inHub { [pending] in
                pending.filter { url in (try? LocalCluster.probe(url)) == nil }
            }
            guard Date() < deadline else { throw TestFailure("no JetStream meta leader on \(pending) within 60 s") }
            if !pending.isEmpty { Thread.sleep(forTimeInterval: 0.2) }  // a poll interval
        }
    }
}

/// A backend's DEALER on one gateway, one PUB at a time.
final class LabPublisher {
    enum Answer { case confirmed([UInt64]), refused(String) }

    private let socket: Socket
    private var correlation = 0

    init(context: Context, endpoint: String) throws {
        socket = try Socket(context: context, type: .dealer)
        // The gateway answers a PUB within its publish timeout; far longer is a hang.
        try socket.setReceiveTimeout(20_000)
        try socket.setSendTimeout(20_000)
        try socket.connect(endpoint)
    }

    /// Sends one PUB of `ids` to `in` and waits for its answer.
    func publish(_ ids: [String]) throws -> Answer {
        correlation += 1
        let tag = "c\(correlation)"
        guard try socket.send([WireProtocol.signature, Array("PUB".utf8), Array(tag.utf8), Array("in".utf8)] + ids.map { GatewayTests.event($0) }) else {
            throw TestFailure("PUB \(ids[0])… could not be sent within 20 s: is the gateway there?")
        }
        while true {
            guard let reply = try socket.receive() else { throw TestFailure("no answer to PUB \(ids[0])… within 20 s: a hang") }
            guard reply.count >= 4, String(decoding: reply[2], as: UTF8.self) == tag else { continue }  // a late answer
            if reply[1] == Array("OK".utf8) {
                return .confirmed(reply.dropFirst(3).compactMap { UInt64(String(decoding: $0, as: UTF8.self)) })
            }
            return .refused(String(decoding: reply[3], as: UTF8.self))
        }
    }
}
