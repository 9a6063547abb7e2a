import EventBusCore

/// What a hostile peer of the campaign sends the broker (docs/reliability.md, "Hostile
/// peers"): every kind of malformed frame, request and event, each one the broker must
/// refuse with its code and forget, none of which may ever reach the log. Every event
/// names ``source``, so that the checker finds any that did (rule 8).
public enum HostileMessages {
    /// The `source` of every event a hostile peer sends.
    public static let source = "/hostile"

    /// The kinds, in a fixed order (a seed picks among them).
    public static let kinds = [
        "bad signature", "no verb", "unknown verb", "reply verb", "PUB without events", "PUB to an unknown stage",
        "event not JSON", "event not an object", "event without id", "unknown type", "bad subject", "bad data",
        "oversized event", "too many events", "PUBS with a broken batch", "CONSUME with a bad credit", "ACK without SEQ",
        "REQ to an unknown service", "HELLO not JSON", "forward of nothing", "empty frames",
    ]

    /// The `n`-th message of kind `kind` (an index in ``kinds``): frames after the routing id.
    public static func message(kind: Int, n: Int) -> [[UInt8]] {
        let sig = WireProtocol.signature
        let corr = Array("h\(n)".utf8)
        func pub(_ events: [[UInt8]], to stage: String = "in") -> [[UInt8]] { [sig, Array("PUB".utf8), corr, Array(stage.utf8)] + events }
        func event(type: String = "message.read", subject: String = "messaging:hostile", id: String? = nil,
                   data: String = #"{"cid":"messaging:hostile","user_id":"mallory","message_id":"m1"}"#) -> [UInt8] {
            let idField = id.map { #""id":"\#($0)","# } ?? ""
            return Array(#"{"specversion":"1.0",\#(idField)"source":"\#(source)","type":"\#(type)","subject":"\#(subject)","time":"2026-11-25T08:00:00.000Z","data":\#(data)}"#.utf8)
        }
        switch kinds[kind % kinds.count] {
        case "bad signature": return [Array("EB9".utf8), Array("PUB".utf8), corr, Array("in".utf8), event(id: "h\(n)")]
        case "no verb": return [sig]
        case "unknown verb": return [sig, Array("PUBLISH".utf8), corr]
        case "reply verb": return [sig, Array("OK".utf8), corr, Array("1".utf8)]
        case "PUB without events": return pub([])
        case "PUB to an unknown stage": return pub([event(id: "h\(n)")], to: "nowhere")
        case "event not JSON": return pub([Array("{\"specversion\":\"1.0\",\"id\":\"h\(n)\",\"source\":\"\(source)\"".utf8)])
        case "event not an object": return pub([Array("[\"\(source)\",\(n)]".utf8)])
        case "event without id": return pub([event()])
        case "unknown type": return pub([event(type: "message.liked", id: "h\(n)")])
        case "bad subject": return pub([event(subject: "messaging:elsewhere", id: "h\(n)")])
        case "bad data": return pub([event(id: "h\(n)", data: #"{"cid":"messaging:hostile","user_id":7}"#)])
        case "oversized event":
            let padding = String(repeating: "x", count: 70_000)
            return pub([event(id: "h\(n)", data: #"{"cid":"messaging:hostile","user_id":"mallory","message_id":"m1","pad":"\#(padding)"}"#)])
        case "too many events": return pub((0...WireProtocol.maxBatchEvents).map { event(type: "nothing.at.all", id: "h\(n)-\($0)") })
        case "PUBS with a broken batch": return [sig, Array("PUBS".utf8), corr, Array("in".utf8), [0xFF, 0xFF, 0xFF, 0x7F, 0x01]]
        case "CONSUME with a bad credit": return [sig, Array("CONSUME".utf8), corr, Array("hostile".utf8), Array("earliest".utf8), Array("lots".utf8)]
        case "ACK without SEQ": return [sig, Array("ACK".utf8), corr, Array("receipt-reducer".utf8)]
        case "REQ to an unknown service": return [sig, Array("REQ".utf8), corr, Array("nothing".utf8), Array("x".utf8), Array("{}".utf8)]
        case "HELLO not JSON": return [sig, Array("HELLO".utf8), corr, Array("{hello".utf8)]
        case "forward of nothing": return pub([Array("@999999999".utf8)], to: "receipt-reducer")
        default: return [sig, [], [], []]
        }
    }
}
