import EventBusCore

/// What a hostile peer of the campaign sends the broker (docs/reliability.md, "Hostile
/// peers"): every kind of malformed frame, request and event, each one the broker must
/// refuse with its code and forget, none of which may ever reach the log. Every event
/// names ``source``, so that the checker finds any that did (rule 8).
public enum HostileMessages {
    /// The `source` of every event a hostile peer sends.
    public static let source = "/hostile"

    /// The kinds, in a fixed order (a seed picks among them).
    public enum Kind: String, CaseIterable, Sendable {
        case badSignature = "bad signature", noVerb = "no verb", unknownVerb = "unknown verb", replyVerb = "reply verb"
        case pubWithoutEvents = "PUB without events", pubToAnUnknownStage = "PUB to an unknown stage"
        case eventNotJSON = "event not JSON", eventNotAnObject = "event not an object", eventWithoutID = "event without id"
        case unknownType = "unknown type", badSubject = "bad subject", badData = "bad data", oversizedEvent = "oversized event"
        case tooManyEvents = "too many events", brokenPubsBatch = "PUBS with a broken batch"
        case consumeWithABadCredit = "CONSUME with a bad credit", ackWithoutSEQ = "ACK without SEQ"
        case reqToAnUnknownService = "REQ to an unknown service", helloNotJSON = "HELLO not JSON"
        case forwardOfNothing = "forward of nothing", emptyFrames = "empty frames"
    }

    /// The `n`-th message of `kind`: frames after the routing id.
    public static func message(_ kind: Kind, n: Int) -> [[UInt8]] {
        let sig = WireProtocol.signature
        let corr = Array("h\(n)".utf8)
        func pub(_ events: [[UInt8]], to stage: String = "in") -> [[UInt8]] { [sig, Array("PUB".utf8), corr, Array(stage.utf8)] + events }
        func event(type: String = "message.read", subject: String = "messaging:hostile", id: String? = nil,
                   data: String = #"{"cid":"messaging:hostile","user_id":"mallory","message_id":"m1"}"#) -> [UInt8] {
            let idField = id.map { #""id":"\#($0)","# } ?? ""
            return Array(#"{"specversion":"1.0",\#(idField)"source":"\#(source)","type":"\#(type)","subject":"\#(subject)","time":"2026-11-25T08:00:00.000Z","data":\#(data)}"#.utf8)
        }
        switch kind {
        case .badSignature: return [Array("EB9".utf8), Array("PUB".utf8), corr, Array("in".utf8), event(id: "h\(n)")]
        case .noVerb: return [sig]
        case .unknownVerb: return [sig, Array("PUBLISH".utf8), corr]
        case .replyVerb: return [sig, Array("OK".utf8), corr, Array("1".utf8)]
        case .pubWithoutEvents: return pub([])
        case .pubToAnUnknownStage: return pub([event(id: "h\(n)")], to: "nowhere")
        case .eventNotJSON: return pub([Array("{\"specversion\":\"1.0\",\"id\":\"h\(n)\",\"source\":\"\(source)\"".utf8)])
        case .eventNotAnObject: return pub([Array("[\"\(source)\",\(n)]".utf8)])
        case .eventWithoutID: return pub([event()])
        case .unknownType: return pub([event(type: "message.liked", id: "h\(n)")])
        case .badSubject: return pub([event(subject: "messaging:elsewhere", id: "h\(n)")])
        case .badData: return pub([event(id: "h\(n)", data: #"{"cid":"messaging:hostile","user_id":7}"#)])
        case .oversizedEvent:
            let padding = String(repeating: "x", count: 70_000)
            return pub([event(id: "h\(n)", data: #"{"cid":"messaging:hostile","user_id":"mallory","message_id":"m1","pad":"\#(padding)"}"#)])
        case .tooManyEvents: return pub((0...WireProtocol.maxBatchEvents).map { event(type: "nothing.at.all", id: "h\(n)-\($0)") })
        case .brokenPubsBatch: return [sig, Array("PUBS".utf8), corr, Array("in".utf8), [0xFF, 0xFF, 0xFF, 0x7F, 0x01]]
        case .consumeWithABadCredit: return [sig, Array("CONSUME".utf8), corr, Array("hostile".utf8), Array("earliest".utf8), Array("lots".utf8)]
        case .ackWithoutSEQ: return [sig, Array("ACK".utf8), corr, Array("receipt-reducer".utf8)]
        case .reqToAnUnknownService: return [sig, Array("REQ".utf8), corr, Array("nothing".utf8), Array("x".utf8), Array("{}".utf8)]
        case .helloNotJSON: return [sig, Array("HELLO".utf8), corr, Array("{hello".utf8)]
        case .forwardOfNothing: return pub([Array("@999999999".utf8)], to: "receipt-reducer")
        case .emptyFrames: return [sig, [], [], []]
        }
    }
}
