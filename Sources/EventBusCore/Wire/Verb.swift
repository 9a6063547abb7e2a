/// The verbs of the command socket, as they travel in frame 1.
public enum Verb: String, Sendable, CaseIterable {
    // Requests, DEALER to ROUTER.
    case hello = "HELLO"
    case ping = "PING"
    case pub = "PUB"
    /// A PUB whose events travel in one BATCH frame (``PublishBatch``).
    case pubs = "PUBS"
    case consume = "CONSUME"
    case ack = "ACK"
    case cancel = "CANCEL"
    case req = "REQ"
    case stats = "STATS"
    // Replies and pushes, ROUTER to DEALER.
    case ok = "OK"
    case err = "ERR"
    case evt = "EVT"
    /// Many events of one consumer in one message (batched delivery, asked for in `HELLO`).
    case evts = "EVTS"
    case end = "END"

    /// The verb's bytes on the wire (built once: this is on every message's path).
    public var bytes: [UInt8] {
        switch self {
        case .hello: Self.helloBytes
        case .ping: Self.pingBytes
        case .pub: Self.pubBytes
        case .pubs: Self.pubsBytes
        case .consume: Self.consumeBytes
        case .ack: Self.ackBytes
        case .cancel: Self.cancelBytes
        case .req: Self.reqBytes
        case .stats: Self.statsBytes
        case .ok: Self.okBytes
        case .err: Self.errBytes
        case .evt: Self.evtBytes
        case .evts: Self.evtsBytes
        case .end: Self.endBytes
        }
    }

    private static let helloBytes = Array("HELLO".utf8), pingBytes = Array("PING".utf8), pubBytes = Array("PUB".utf8)
    private static let consumeBytes = Array("CONSUME".utf8), ackBytes = Array("ACK".utf8), cancelBytes = Array("CANCEL".utf8)
    private static let reqBytes = Array("REQ".utf8), statsBytes = Array("STATS".utf8), okBytes = Array("OK".utf8)
    private static let errBytes = Array("ERR".utf8), evtBytes = Array("EVT".utf8), endBytes = Array("END".utf8)
    private static let evtsBytes = Array("EVTS".utf8), pubsBytes = Array("PUBS".utf8)
}
