/// The verbs of the command socket, as they travel in frame 1.
public enum Verb: String, Sendable, CaseIterable {
    // Requests, DEALER to ROUTER.
    case hello = "HELLO"
    case ping = "PING"
    case pub = "PUB"
    case consume = "CONSUME"
    case ack = "ACK"
    case cancel = "CANCEL"
    case req = "REQ"
    case stats = "STATS"
    // Replies and pushes, ROUTER to DEALER.
    case ok = "OK"
    case err = "ERR"
    case evt = "EVT"
    case end = "END"

    /// The verb's bytes on the wire.
    public var bytes: [UInt8] { Array(rawValue.utf8) }
}
