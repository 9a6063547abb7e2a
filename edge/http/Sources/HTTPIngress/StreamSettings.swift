/// How `GET /v1/stream` paces and bounds each client (docs/http.md, "The stream").
public struct StreamSettings: Sendable, Equatable {
    /// How often a heartbeat comment goes to each client (`--stream-heartbeat`).
    public var heartbeat: Duration = .seconds(15)
    /// The most messages (events and heartbeats) one client's buffer holds before the client
    /// is cut (`--stream-buffer`).
    public var bufferEvents = 1_000
    /// How long a cut client has to take its last write and the final `cut` event before its
    /// connection is closed: what keeps a client that reads nothing from holding memory.
    public var cutGrace: Duration = .seconds(5)
    /// The credit of each stream's durable consumer (docs/protocol.md, CONSUME): the buffer's
    /// size (16 to 65,536), so that what waits for one client on the bus connection is bounded
    /// by the same setting as its buffer.
    public var credit: Int { min(max(bufferEvents, 16), 65_536) }

    public init() {}
}
