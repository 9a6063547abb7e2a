import EventBus

/// Where the gateway reads a channel's current members when it meets a channel it does not know yet.
public protocol MembershipSource: Sendable {
    /// The current members of `cid`.
    ///
    /// - Parameter cid: The channel.
    /// - Returns: The user ids of its members (empty for an unknown channel).
    func members(of cid: String) async throws -> Set<String>
}

/// Asks the reducer's `receipts` service (`channel_state`, every page) for a channel's members.
public struct ReceiptsMembershipSource: MembershipSource {
    let client: BusClient
    let viewer: String

    /// Creates a source that queries through `client`.
    ///
    /// - Parameters:
    ///   - client: The bus connection.
    ///   - viewer: The `viewer` the gateway names in its queries (the privacy filters never hide membership).
    public init(client: BusClient, viewer: String = "chat-gateway") {
        self.client = client
        self.viewer = viewer
    }

    /// Reads every page of `channel_state` for `cid`.
    public func members(of cid: String) async throws -> Set<String> {
        var members: Set<String> = []
        var cursor: String?
        for _ in 0..<10_000 {
            var params = JSONWriter()
            params.beginObject()
            params.key("cid")
            params.string(cid)
            params.key("viewer")
            params.string(viewer)
            params.key("page_size")
            params.int(1000)
            if let cursor {
                params.key("cursor")
                params.string(cursor)
            }
            params.endObject()
            let reply = try await client.request(
                service: "receipts", method: "channel_state", params: String(decoding: params.bytes, as: UTF8.self))
            let json = try JSONParser.parse(reply)
            let state = json["members"] != nil ? json : (json["data"] ?? json)
            guard case .array(let entries)? = state["members"] else { return members }
            for entry in entries {
                if let user = entry["user_id"]?.stringValue { members.insert(user) }
            }
            guard let next = state["next_cursor"]?.stringValue else { return members }
            cursor = next
        }
        return members
    }
}
