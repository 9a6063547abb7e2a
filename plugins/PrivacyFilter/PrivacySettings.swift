import EventBusCore

/// A privacy filter's durable state: every user's and channel type's receipt
/// settings, as of the last event applied, and the suppressions so far.
///
/// Only what differs from the default (everything enabled) is kept. The
/// runtime commits it with the SEQ of the last event applied, so after a
/// restart the filter judges every event by the settings in force at its SEQ.
public struct PrivacySettings: PluginState, Equatable {
    /// User id → flags, for users with something off.
    public private(set) var users: [String: ReceiptFlags] = [:]
    /// Channel type → flags, for types with something off.
    public private(set) var channelTypes: [String: ReceiptFlags] = [:]
    /// Suppressions so far, by reason.
    public private(set) var suppressed: [SuppressionReason: UInt64] = [:]
    /// Channel → current members; kept only by a read filter with reciprocity,
    /// to know the one-to-one channels (exactly two members).
    public private(set) var members: [String: Set<String>] = [:]

    /// Everything enabled, nothing suppressed.
    public init() {}

    /// Applies `user.updated` and `channel_type.updated`; ignores any other payload.
    /// Omitted keys keep their value.
    public mutating func apply(_ payload: IngressPayload) {
        switch payload {
        case .userUpdated(let userID, let delivery, let read):
            let flags = (users[userID] ?? []).updated(read: read, delivery: delivery)
            users[userID] = flags.isEmpty ? nil : flags
        case .channelTypeUpdated(let name, let delivery, let read):
            let flags = (channelTypes[name] ?? []).updated(read: read, delivery: delivery)
            channelTypes[name] = flags.isEmpty ? nil : flags
        default:
            break
        }
    }

    /// Applies membership (`channel.created`, `member.added`, `member.removed`,
    /// `channel.deleted`, `user.deleted`) as the reducer does: a repeated
    /// `channel.created` adds whom it names, membership changes of unknown
    /// channels change nothing, a deleted channel has no members (and may be
    /// created again), a deleted user is in no channel.
    public mutating func applyMembership(_ payload: IngressPayload) {
        switch payload {
        case .channelCreated(let cid, let users):
            members[cid, default: []].formUnion(users)
        case .memberAdded(let cid, let userID):
            members[cid]?.insert(userID)
        case .memberRemoved(let cid, let userID):
            members[cid]?.remove(userID)
        case .channelDeleted(let cid):
            members[cid] = nil
        case .userDeleted(let userID, _):
            for cid in members.keys where members[cid]?.contains(userID) == true { members[cid]?.remove(userID) }
        default:
            break
        }
    }

    /// In a channel of exactly two members, the member other than `userID`.
    public func otherMember(of cid: String, than userID: String) -> String? {
        guard let current = members[cid], current.count == 2, current.contains(userID) else { return nil }
        return current.first { $0 != userID }
    }

    /// The flags of `userID` (empty: everything enabled).
    public func flags(ofUser userID: String) -> ReceiptFlags { users[userID] ?? [] }

    /// The flags of the channel type `name`.
    public func flags(ofChannelType name: String) -> ReceiptFlags { channelTypes[name] ?? [] }

    /// Why `policy` suppresses a receipt of `userID` in `cid`, or `nil` to let it through.
    /// The user's setting is reported before the channel type's.
    public func suppression(_ policy: PrivacyPolicy, userID: String, cid: String) -> SuppressionReason? {
        if flags(ofUser: userID).contains(policy.flag) { return .userSetting }
        let type = String(cid.prefix { $0 != ":" })
        if flags(ofChannelType: type).contains(policy.flag) { return .channelType }
        return nil
    }

    /// Counts one suppression.
    public mutating func count(_ reason: SuppressionReason) {
        suppressed[reason, default: 0] += 1
    }

    // MARK: PluginState

    /// `{"users":{ID:BITS…},"types":{NAME:BITS…},"suppressed":{REASON:N…}}`, keys sorted.
    public func snapshot() -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("users"); w.beginObject()
        for (user, flags) in users.sorted(by: { $0.key < $1.key }) { w.key(user); w.int(Int(flags.rawValue)) }
        w.endObject()
        w.key("types"); w.beginObject()
        for (type, flags) in channelTypes.sorted(by: { $0.key < $1.key }) { w.key(type); w.int(Int(flags.rawValue)) }
        w.endObject()
        w.key("suppressed"); w.beginObject()
        for reason in SuppressionReason.allCases { w.key(reason.rawValue); w.uint(suppressed[reason] ?? 0) }
        w.endObject()
        if !members.isEmpty {
            w.key("members"); w.beginObject()
            for (cid, users) in members.sorted(by: { $0.key < $1.key }) {
                w.key(cid); w.beginArray(); for user in users.sorted() { w.string(user) }; w.endArray()
            }
            w.endObject()
        }
        w.endObject()
        return w.bytes
    }

    /// Restores the state from ``snapshot()``'s bytes.
    public init(snapshot: [UInt8]) throws {
        let root = try JSONParser.parse(snapshot)
        func map(_ key: String) throws -> [(key: String, value: JSONValue)] {
            guard case .object(let members)? = root[key] else { throw PluginError("privacy snapshot: \(key) missing") }
            return members
        }
        func flags(_ value: JSONValue) throws -> ReceiptFlags {
            guard let bits = value.int64Value, (1...3).contains(bits) else { throw PluginError("privacy snapshot: bad flags") }
            return ReceiptFlags(rawValue: UInt8(bits))
        }
        for (user, value) in try map("users") { users[user] = try flags(value) }
        for (type, value) in try map("types") { channelTypes[type] = try flags(value) }
        for (reason, value) in try map("suppressed") {
            guard let known = SuppressionReason(rawValue: reason), let n = value.int64Value, n >= 0 else {
                throw PluginError("privacy snapshot: bad suppression count \(reason)")
            }
            if n > 0 { suppressed[known] = UInt64(n) }
        }
        if case .object(let channels)? = root["members"] {
            for (cid, list) in channels {
                guard case .array(let users) = list else { throw PluginError("privacy snapshot: bad members of \(cid)") }
                members[cid] = Set(users.compactMap(\.stringValue))
            }
        }
    }
}
