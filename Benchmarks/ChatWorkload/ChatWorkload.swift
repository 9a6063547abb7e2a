import EventBusCore
import Foundation

/// A realistic chat workload for stage `in`, as NDJSON of CloudEvents in the shapes
/// docs/events.md accepts, deterministic for a seed.
///
/// Setup first: every channel's `channel.created` (most of its members), the rest of the
/// members as `member.added`, and privacy settings (`user.updated`) for about 1 % of the
/// users. Then traffic, drawn event by event:
///
/// | share | event |
/// |---|---|
/// | 57 % | `message.delivered` |
/// | 33 % | `message.read` |
/// | 8 % | `message.new` (4 % of them `system`, 5 % `silent`, 1.5 % from a bot that is no member, 0.3 % to a channel that does not exist) |
/// | 1.7 % | `notification.mark_read` |
/// | 0.1 % | `notification.mark_unread` (a tenth from the message's own sender: `own_message`) |
/// | 0.2 % | `user.updated` toggling read or delivery receipts of the users with settings |
///
/// and, instead of a fresh event, 3 % of the lines repeat one of the last 5,000 lines
/// byte for byte (a retried publish: same `id`). Acks race: each picks one of the channel's
/// recent messages (mostly the newest, sometimes older ones: a late ack that changes
/// nothing), read acks come before delivery acks as often as after, 0.4 % name the
/// channel's next message before its `message.new` (`unknown_message`) and 0.3 % come from
/// a user who is not a member (`not_member`). Channels: 55 % of two members, 30 % of 3–12,
/// 12 % of 13–100, 2.5 % of 101–400 and 0.5 % of 401–1,000; messages go to a channel with
/// a weight of the square root of its size, acks to a message with a weight of its
/// recipients (up to 64), so large channels get most acks.
public struct ChatWorkload: Sendable {
    public let count: Int
    public let seed: UInt64

    struct Channel {
        let cid: String
        var members: [Int]
        var memberSet: Set<Int>
        /// Messages sent so far: ids m1…mN.
        var messages = 0
    }

    /// A sent message the acks may name.
    struct Sent {
        let channel: Int
        let number: Int
        let sender: Int
    }

    /// What the last ``generate(_:)`` made, by kind (`message.read`, `duplicate`, …), and
    /// `lines`, `setup_lines`, `channels`, `users`, `memberships`, `largest_channel`.
    public private(set) var summary: [String: Int] = [:]

    public init(count: Int, seed: UInt64) {
        self.count = count
        self.seed = seed
    }

    /// Writes the workload to `path` as NDJSON.
    public mutating func write(to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let file = FileHandle(forWritingAtPath: path) else {
            throw WorkloadError("cannot create \(path)")
        }
        defer { try? file.close() }
        var out: [UInt8] = []
        out.reserveCapacity(1 << 21)
        try generate { line in
            out.append(contentsOf: line)
            out.append(0x0A)
            if out.count >= 1 << 20 {
                try file.write(contentsOf: out)
                out.removeAll(keepingCapacity: true)
            }
        }
        try file.write(contentsOf: out)
    }

    /// The whole workload in memory, one event per element, in order.
    public mutating func lines() throws -> [[UInt8]] {
        var lines: [[UInt8]] = []
        lines.reserveCapacity(count)
        try generate { lines.append($0) }
        return lines
    }

    /// Hands each line (one event's JSON, no newline) to `sink`, in order.
    public mutating func generate(_ sink: ([UInt8]) throws -> Void) throws {
        let seed = self.seed
        var random = SplitMix64(seed: seed)
        var lines = 0
        var recentLines: [[UInt8]] = []
        recentLines.reserveCapacity(5_000)
        var recentNext = 0
        var clock: Int64 = 1_795_593_600_000  // 2026-11-25T08:00:00.000Z in ms
        var tally: [String: Int] = [:]

        func emit(_ line: String, type: String, keep: Bool = true) throws {
            let bytes = Array(line.utf8)
            try sink(bytes)
            lines += 1
            tally[type, default: 0] += 1
            if keep {
                if recentLines.count < 5_000 { recentLines.append(bytes) } else { recentLines[recentNext] = bytes }
                recentNext = (recentNext + 1) % 5_000
            }
        }
        func envelope(_ type: String, _ subject: String, _ time: Int64, _ data: String) -> String {
            #"{"specversion":"1.0","id":"w\#(seed)-\#(lines)","source":"/chat-api","type":"\#(type)","subject":"\#(subject)","time":"\#(Self.timestamp(time))","data":\#(data)}"#
        }

        // Channels and their members.
        let channelCount = max(10, count / 100)
        var sizes: [Int] = []
        for _ in 0..<channelCount {
            let r = random.unit()
            sizes.append(r < 0.55 ? 2 : r < 0.85 ? random.inRange(3...12) : r < 0.97 ? random.inRange(13...100)
                         : r < 0.995 ? random.inRange(101...400) : random.inRange(401...1_000))
        }
        let memberships = sizes.reduce(0, +)
        let userCount = max(1_200, memberships / 6)
        var channels: [Channel] = []
        channels.reserveCapacity(channelCount)
        for (index, size) in sizes.enumerated() {
            var set = Set<Int>()
            var members: [Int] = []
            while members.count < size {
                let user = random.below(userCount)
                if set.insert(user).inserted { members.append(user) }
            }
            let type = size == 2 ? "messaging" : size <= 100 ? "team" : "livestream"
            channels.append(Channel(cid: "\(type):c\(index)", members: members, memberSet: set))
        }
        // Message weights: the square root of the size; a cumulative table for sampling.
        var cumulative: [Double] = []
        var total = 0.0
        for channel in channels {
            total += Double(channel.members.count).squareRoot()
            cumulative.append(total)
        }
        func pickChannel(_ random: inout SplitMix64) -> Int {
            let x = random.unit() * total
            var low = 0, high = cumulative.count - 1
            while low < high {
                let mid = (low + high) / 2
                if cumulative[mid] <= x { low = mid + 1 } else { high = mid }
            }
            return low
        }

        // Setup: channel.created with about 80 % of the members, member.added for the rest.
        var later: [(Int, Int)] = []
        for (index, channel) in channels.enumerated() {
            let initial = channel.members.count == 2 ? 2 : max(2, channel.members.count * 4 / 5)
            let list = channel.members.prefix(initial).map { "\"u\($0)\"" }.joined(separator: ",")
            clock += Int64(random.below(3))
            try emit(envelope("channel.created", channel.cid, clock, #"{"cid":"\#(channel.cid)","members":[\#(list)]}"#), type: "channel.created")
            for user in channel.members.dropFirst(initial) { later.append((index, user)) }
        }
        for (index, user) in later {
            clock += Int64(random.below(3))
            let cid = channels[index].cid
            try emit(envelope("member.added", cid, clock, #"{"cid":"\#(cid)","user_id":"u\#(user)"}"#), type: "member.added")
        }
        // Privacy: about 1 % of the users have settings; some start with receipts off.
        let privateUsers = (0..<max(12, userCount / 100)).map { _ in random.below(userCount) }
        func privacy(_ user: Int, _ random: inout SplitMix64) -> String {
            let read = random.chance(probability: 0.5) ? "true" : "false"
            let delivery = random.chance(probability: 0.5) ? "true" : "false"
            let settings = switch random.below(3) {
            case 0: #"{"read_receipts":{"enabled":\#(read)}}"#
            case 1: #"{"delivery_receipts":{"enabled":\#(delivery)}}"#
            default: #"{"read_receipts":{"enabled":\#(read)},"delivery_receipts":{"enabled":\#(delivery)}}"#
            }
            return #"{"user":{"id":"u\#(user)","privacy_settings":\#(settings)}}"#
        }
        for user in privateUsers {
            clock += Int64(random.below(3))
            try emit(envelope("user.updated", "@u\(user)", clock, privacy(user, &random)), type: "user.updated")
        }
        let setupLines = lines
        guard setupLines < count else { throw WorkloadError("COUNT \(count) is too small for the setup (\(setupLines) lines)") }

        // Traffic.
        var recent: [Sent] = []
        recent.reserveCapacity(4_096)
        var recentStart = 0
        func pickMessage(_ random: inout SplitMix64, _ channels: [Channel]) -> Sent? {
            guard !recent.isEmpty else { return nil }
            var choice = recent[0]
            for _ in 0..<8 {
                // Mostly the newest messages: an exponential distance back from the newest.
                let back = min(recent.count - 1, Int(-log(1 - random.unit()) * 40))
                choice = recent[(recentStart + recent.count - 1 - back) % recent.count]
                let recipients = channels[choice.channel].members.count - 1
                if random.unit() < min(1, Double(recipients) / 64) { break }
            }
            return choice
        }
        func remember(_ sent: Sent) {
            if recent.count < 4_096 { recent.append(sent) } else {
                recent[recentStart] = sent
                recentStart = (recentStart + 1) % 4_096
            }
        }
        func anyone(but sender: Int, in channel: Channel, _ random: inout SplitMix64) -> Int {
            var user = channel.members[random.below(channel.members.count)]
            if user == sender { user = channel.members[random.below(channel.members.count)] }
            if user == sender && channel.members.count > 1 { user = channel.members[(channel.members.firstIndex(of: sender)! + 1) % channel.members.count] }
            return user
        }
        func stranger(to channel: Channel, _ random: inout SplitMix64) -> Int {
            while true {
                let user = random.below(userCount)
                if !channel.memberSet.contains(user) { return user }
            }
        }
        let words = ["ok", "lunch", "at", "noon", "ship", "it", "the", "demo", "is", "ready", "see", "you", "soon", "thanks", "on", "my", "way"]
        var ghosts = 0
        while lines < count {
            clock += Int64(random.below(4))
            if random.chance(probability: 0.03), !recentLines.isEmpty {
                try sink(recentLines[random.below(recentLines.count)])
                lines += 1
                tally["duplicate", default: 0] += 1
                continue
            }
            let r = random.unit() * 100
            if r < 8 || recent.isEmpty {
                // message.new
                var index = pickChannel(&random)
                var cid = channels[index].cid
                if random.chance(probability: 0.003) {
                    ghosts += 1
                    cid = "team:ghost\(ghosts)"
                    index = -1
                }
                let bot = random.chance(probability: 0.015)
                let sender = index >= 0 && !bot ? channels[index].members[random.below(channels[index].members.count)] : -1 - random.below(5)
                let senderID = sender >= 0 ? "u\(sender)" : "bot\(-1 - sender)"
                let number: Int
                if index >= 0 {
                    channels[index].messages += 1
                    number = channels[index].messages
                } else {
                    number = 1
                }
                let kind = random.unit()
                let extra = kind < 0.04 ? #","type":"system""# : kind < 0.09 ? #","silent":true"# : ""
                let text = (0..<random.inRange(1...12)).map { _ in words[random.below(words.count)] }.joined(separator: " ")
                let created = clock - Int64(random.below(50))
                try emit(envelope("message.new", cid, clock,
                                  #"{"cid":"\#(cid)","message":{"id":"m\#(number)","user_id":"\#(senderID)","created_at":"\#(Self.timestamp(created))"\#(extra),"text":"\#(text)"}}"#),
                         type: index >= 0 ? "message.new" : "message.new(unknown_channel)")
                if index >= 0 { remember(Sent(channel: index, number: number, sender: sender)) }
            } else if r < 8 + 57 + 33 {
                // message.delivered or message.read
                let read = r >= 8 + 57
                guard let sent = pickMessage(&random, channels) else { continue }
                let channel = channels[sent.channel]
                var user = anyone(but: sent.sender, in: channel, &random)
                var number = sent.number
                var type = read ? "message.read" : "message.delivered"
                if random.chance(probability: 0.003) {
                    user = stranger(to: channel, &random)
                    type += "(not_member)"
                } else if random.chance(probability: 0.004) {
                    number = channel.messages + 1
                    type += "(before_message)"
                }
                let at = random.chance(probability: 0.5) ? #","\#(read ? "read_at" : "delivered_at")":"\#(Self.timestamp(clock - Int64(random.below(2_000))))""# : ""
                try emit(envelope(read ? "message.read" : "message.delivered", channel.cid, clock,
                                  #"{"cid":"\#(channel.cid)","user_id":"u\#(user)","message_id":"m\#(number)"\#(at)}"#), type: type)
            } else if r < 8 + 57 + 33 + 1.7 {
                guard let sent = pickMessage(&random, channels) else { continue }
                let channel = channels[sent.channel]
                let user = anyone(but: sent.sender, in: channel, &random)
                let at = random.chance(probability: 0.3) ? #","read_at":"\#(Self.timestamp(clock - Int64(random.below(1_000))))""# : ""
                try emit(envelope("notification.mark_read", channel.cid, clock, #"{"cid":"\#(channel.cid)","user_id":"u\#(user)"\#(at)}"#),
                         type: "notification.mark_read")
            } else if r < 8 + 57 + 33 + 1.7 + 0.1 {
                guard let sent = pickMessage(&random, channels) else { continue }
                let channel = channels[sent.channel]
                let own = random.chance(probability: 0.1) && sent.sender >= 0
                let user = own ? sent.sender : anyone(but: sent.sender, in: channel, &random)
                try emit(envelope("notification.mark_unread", channel.cid, clock,
                                  #"{"cid":"\#(channel.cid)","user_id":"u\#(user)","message_id":"m\#(sent.number)"}"#),
                         type: own ? "notification.mark_unread(own_message)" : "notification.mark_unread")
            } else {
                let user = privateUsers[random.below(privateUsers.count)]
                try emit(envelope("user.updated", "@u\(user)", clock, privacy(user, &random)), type: "user.updated")
            }
        }
        summary = tally
        summary["lines"] = lines
        summary["setup_lines"] = setupLines
        summary["channels"] = channelCount
        summary["users"] = userCount
        summary["memberships"] = memberships
        summary["largest_channel"] = sizes.max() ?? 0
    }

    /// `2026-11-25T08:00:00.000Z` from milliseconds since 1970 (UTC).
    public static func timestamp(_ milliseconds: Int64) -> String {
        let days = Int(milliseconds / 86_400_000)
        let rest = Int(milliseconds % 86_400_000)
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let ms = rest % 1_000
        let msText = ms < 10 ? "00\(ms)" : ms < 100 ? "0\(ms)" : "\(ms)"
        return "\(year)-\(two(month))-\(two(day))T\(two(rest / 3_600_000)):\(two(rest / 60_000 % 60)):\(two(rest / 1_000 % 60)).\(msText)Z"
    }
}

/// The workload could not be made or written.
public struct WorkloadError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
