import ArgumentParser
import EventBus
import Foundation

/// `eventbus demo`: a scripted group chat against a running bus, printing what each user sees.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Play a scripted group chat against a running bus and print what each user sees.",
        discussion: """
            Start the bus first (`make run`). The demo creates a channel of alice, bob and carol \
            (ids unique to the run, so it can be run again), publishes messages, deliveries, reads, \
            a mark-unread and a privacy change to stage in, and after each step prints the out \
            events each user receives and the unread badges and "read by" lists the receipts \
            service answers. It reads out as the durable consumer demo-<run id>, which stays \
            listed (disconnected) in `eventbus stats` afterwards.
            """)

    @OptionGroup var client: ClientOptions

    @Option(help: ArgumentHelp("Seconds to wait for a step's out events.", valueName: "SECONDS"))
    var stepTimeout: Double = 3

    func run() async throws {
        let bus = try await client.connectedClient(extra: .seconds(6))
        defer { bus.close() }
        let run = String(UUID().uuidString.lowercased().prefix(8))
        let chat = DemoChat(bus: bus, run: run, stepTimeout: .milliseconds(Int(stepTimeout * 1_000)))
        do {
            try await chat.play()
        } catch let error as BusError {
            throw Output.fail(error, commandEndpoint: client.commandEndpoint, usesKeys: bus.options.curve != nil)
        }
    }
}

/// The script of the demo and the printing of what each user sees.
private struct DemoChat {
    let bus: BusClient
    let run: String
    let stepTimeout: Duration
    let names = ["alice", "bob", "carol"]
    var cid: String { "messaging:demo-\(run)" }

    /// A user's id on the bus: the name and the run, so two runs never share state.
    func id(_ name: String) -> String { "\(name)-\(run)" }
    /// A user's name from an id of this run.
    func name(_ id: String) -> String { id.hasSuffix("-\(run)") ? String(id.dropLast(run.count + 1)) : id }

    func play() async throws {
        let prefixes = ["out/\(cid)/"] + names.map { "out/@\(id($0))/" }
        let consumer = try await bus.consume(name: "demo-\(run)", start: .latest, credit: 1_000, prefixes: prefixes)
        let inbox = DemoInbox()
        let reader = Task {
            for try await delivery in consumer {
                await inbox.add(delivery)
                consumer.ack(delivery.seq)
            }
        }
        defer { reader.cancel() }
        Output.line("eventbus demo: channel \(cid); users alice, bob and carol (ids \(names.map(id).joined(separator: ", ")))")
        Output.line("Each step publishes to stage in; below it, the out events each user's devices receive,")
        Output.line("then what the receipts service answers (unread badges, \"read by\").")

        try await step(1, "alice creates the channel with alice, bob and carol", expect: 0,
                       "channel.created", data: #"{"cid":"\#(cid)","members":["\#(id("alice"))","\#(id("bob"))","\#(id("carol"))"]}"#,
                       note: "membership events stay inside the pipeline: nobody receives one", inbox)
        try await step(2, #"alice posts m1 "Lunch at noon?""#, expect: 1, "message.new", data: message("m1", "alice", "Lunch at noon?"), inbox)
        try await step(3, #"alice posts m2 "Pizza or sushi?""#, expect: 1, "message.new", data: message("m2", "alice", "Pizza or sushi?"), inbox)
        try await step(4, "bob's phone receives m1 and m2", expect: 1, "message.delivered", data: ack("bob", "m2"), inbox)
        try await step(5, "carol's phone receives m1 and m2", expect: 1, "message.delivered", data: ack("carol", "m2"), inbox)
        try await step(6, "bob reads m1", expect: 2, "message.read", data: ack("bob", "m1"), inbox)
        try await readBy("m1")
        try await step(7, "bob marks m1 unread", expect: 1, "notification.mark_unread", data: ack("bob", "m1"), inbox)
        try await step(8, "bob marks the channel read", expect: 2, "notification.mark_read", data: ack("bob", nil), inbox)
        try await readBy("m2")
        try await step(9, "carol turns her read receipts off", expect: 0, "user.updated",
                       subject: "@\(id("carol"))",
                       data: #"{"user":{"id":"\#(id("carol"))","privacy_settings":{"read_receipts":{"enabled":false}}}}"#,
                       note: "settings stay inside the pipeline: the privacy filters apply them to what follows", inbox)
        try await step(10, "carol reads m2", expect: 1, "message.read", data: ack("carol", "m2"), inbox)
        try await readBy("m2")
        try await readBy("m2", viewer: "carol")
        let late = await inbox.take(count: Int.max, within: .milliseconds(300))
        if !late.isEmpty {
            Output.line("   late events:")
            show(late)
        }
        Output.line("done: carol's read of m2 reached only her own devices; everyone, carol too, sees bob as its only reader.")
        try? await consumer.cancel()
    }

    // MARK: Steps

    /// Publishes one ingress event, then prints the out events it caused and the badges.
    func step(
        _ number: Int, _ title: String, expect: Int, _ type: String, subject: String? = nil, data: String,
        note: String? = nil, _ inbox: DemoInbox
    ) async throws {
        Output.line("")
        Output.line("\(number). \(title)")
        let event = CloudEventEnvelope(
            id: "demo-\(run)-\(number)", source: "/eventbus-demo", type: type, subject: subject ?? cid, data: data, time: Date())
        let seq = try await bus.publish(Array(event.json.utf8), stage: "in")
        Output.line("   published \(type) to in, SEQ \(seq)")
        if let note { Output.line("   (\(note))") }
        // A query travels the log behind the event: when it is answered, the event's outputs are on `out`.
        let badges = try await unreadBadges()
        let deliveries = await inbox.take(count: expect, within: stepTimeout)
        show(deliveries)
        Output.line("   unread badges: " + badges.map { "\($0.name) \($0.count)" }.joined(separator: ", "))
    }

    /// Each delivery with who receives it.
    func show(_ deliveries: [Delivery]) {
        for delivery in deliveries {
            let segments = delivery.topic.split(separator: "/", maxSplits: 2)
            let audience: String
            if segments.count == 3, segments[1].hasPrefix("@") {
                audience = "\(name(String(segments[1].dropFirst()))) (own devices only) sees"
            } else {
                audience = "alice, bob, carol see"
            }
            Output.line("   \(audience): \(describe(delivery.event))")
        }
    }

    /// One out event in a few words.
    func describe(_ bytes: [UInt8]) -> String {
        guard let event = try? JSONParser.parse(bytes), let type = event["type"]?.stringValue, let data = event["data"] else {
            return String(decoding: bytes, as: UTF8.self)
        }
        func text(_ key: String) -> String { data[key]?.stringValue ?? "null" }
        func number(_ key: String) -> String { data[key]?.int64Value.map(String.init) ?? "?" }
        let user = name(text("user_id"))
        switch type {
        case "message.new":
            let message = data["message"]
            return "message.new \(message?["id"]?.stringValue ?? "?") from \(name(message?["user_id"]?.stringValue ?? "?")): \"\(message?["text"]?.stringValue ?? "")\""
        case "message.deleted":
            return "message.deleted \(text("message_id"))"
        case "message.delivered":
            return "message.delivered: \(user)'s device has everything up to \(text("last_delivered_message_id"))"
        case "message.read":
            return "message.read: \(user) read up to \(text("last_read_message_id"))"
        case "notification.mark_read":
            return "notification.mark_read: read up to \(text("last_read_message_id")); unread here \(number("unread_messages")), total \(number("total_unread_count"))"
        case "notification.mark_unread":
            return "notification.mark_unread: unread from \(text("first_unread_message_id")); unread here \(number("unread_messages")), total \(number("total_unread_count"))"
        default:
            return "\(type) \(String(decoding: bytes, as: UTF8.self))"
        }
    }

    // MARK: Queries

    /// `unread_counts` for each user: their total unread messages.
    func unreadBadges() async throws -> [(name: String, count: Int64)] {
        var badges: [(name: String, count: Int64)] = []
        for name in names {
            let reply = try JSONParser.parse(try await bus.request(service: "receipts", method: "unread_counts", params: #"{"user_id":"\#(id(name))"}"#))
            badges.append((name, reply["total_unread_count"]?.int64Value ?? -1))
        }
        return badges
    }

    /// `message_receipts` of `messageID` as `viewer` sees it: who read it, and how many are hidden.
    func readBy(_ messageID: String, viewer: String = "alice") async throws {
        let params = #"{"cid":"\#(cid)","message_id":"\#(messageID)","viewer":"\#(id(viewer))"}"#
        let reply = try JSONParser.parse(try await bus.request(service: "receipts", method: "message_receipts", params: params))
        var readers: [String] = []
        if case .array(let entries)? = reply["readers"] {
            readers = entries.compactMap { $0["user_id"]?.stringValue }.map(name)
        }
        let hidden = reply["hidden_member_count"]?.int64Value ?? 0
        Output.line("   \(messageID) read by (as \(viewer) sees it): \(readers.isEmpty ? "nobody" : readers.joined(separator: ", "))"
            + (hidden > 0 ? " (\(hidden) hidden)" : ""))
    }

    // MARK: Event data

    func message(_ messageID: String, _ sender: String, _ text: String) -> String {
        #"{"cid":"\#(cid)","message":{"id":"\#(messageID)","user_id":"\#(id(sender))","created_at":"\#(CloudEventEnvelope.timestamp(Date()))","text":"\#(text)"}}"#
    }

    func ack(_ user: String, _ messageID: String?) -> String {
        #"{"cid":"\#(cid)","user_id":"\#(id(user))"\#(messageID.map { #","message_id":"\#($0)""# } ?? "")}"#
    }
}

/// The out events the demo's consumer has received and not yet shown.
private actor DemoInbox {
    private var deliveries: [Delivery] = []

    func add(_ delivery: Delivery) { deliveries.append(delivery) }

    /// Up to `count` deliveries, waiting at most `within` for them to arrive.
    func take(count: Int, within: Duration) async -> [Delivery] {
        let deadline = ContinuousClock.now + within
        while deliveries.count < count, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        let taken = Array(deliveries.prefix(count))
        deliveries.removeFirst(taken.count)
        return taken
    }
}
