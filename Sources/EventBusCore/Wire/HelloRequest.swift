/// What a `HELLO`'s JSON frame asks (docs/protocol.md, HELLO), checked the same way by the
/// broker and by a cluster's gateway: each member optional, each of its own type, anything
/// else ignored.
package struct HelloRequest: Sendable, Equatable {
    /// `name`, logged by the broker.
    package var name: String?
    /// `services`: the services this peer answers (each `[a-z0-9_.-]{1,64}`).
    package var services: [String]?
    /// `batch`: deliveries as `EVTS`.
    package var batch: Bool?
    /// `compact_ok`: one OK frame for all of a PUB's SEQs.
    package var compactOK: Bool?
    /// `ordered`: the connection's PUBs ordered.
    package var ordered: Bool?

    package init(name: String? = nil, services: [String]? = nil, batch: Bool? = nil, compactOK: Bool? = nil, ordered: Bool? = nil) {
        self.name = name
        self.services = services
        self.batch = batch
        self.compactOK = compactOK
        self.ordered = ordered
    }

    /// Parses frame 3 of `message`, a `HELLO`.
    ///
    /// - Throws: `bad_frame` when the frame is missing; else as ``init(frame:)``.
    package init(_ message: CommandMessage) throws(BusError) {
        try self.init(frame: try message.argument(0, "JSON"))
    }

    /// Parses frame 3 of a `HELLO`.
    ///
    /// - Throws: `bad_json` for a frame that does not parse; `bad_args` for one that is not an
    ///   object, a `services` that is not an array of service names, or a `batch`, `compact_ok`
    ///   or `ordered` that is not a boolean, each naming the member.
    package init(frame: [UInt8]) throws(BusError) {
        let value: JSONValue
        do { value = try JSONParser.parse(frame) } catch { throw BusError(.badJSON, "frame 3: \(error)") }
        guard case .object = value else { throw BusError(.badArgs, "frame 3: must be a JSON object") }
        self.init()
        if case .string(let name)? = value["name"] { self.name = name }
        if let declared = value["services"] {
            guard case .array(let items) = declared else {
                throw BusError(.badArgs, "frame 3: services must be an array of service names")
            }
            var names: [String] = []
            for item in items {
                guard case .string(let name) = item, WireProtocol.isServiceName(name) else {
                    throw BusError(.badArgs, "frame 3: services must be names matching [a-z0-9_.-]{1,64}")
                }
                names.append(name)
            }
            services = names
        }
        batch = try Self.flag(value, "batch")
        compactOK = try Self.flag(value, "compact_ok")
        ordered = try Self.flag(value, "ordered")
    }

    /// The boolean member `key` of `value`, if present.
    private static func flag(_ value: JSONValue, _ key: String) throws(BusError) -> Bool? {
        guard let member = value[key] else { return nil }
        guard case .bool(let on) = member else { throw BusError(.badArgs, "frame 3: \(key) must be true or false") }
        return on
    }
}
