/// CloudEvents of the receipts catalogue (docs/events.md), as the tests send them.
enum Events {
    static func event(_ id: String, _ type: String, subject: String, data: String) -> String {
        #"{"specversion":"1.0","id":"\#(id)","source":"/http-test","type":"\#(type)","subject":"\#(subject)","data":\#(data)}"#
    }

    static func channel(_ cid: String, _ members: [String]) -> String {
        event("create-\(cid)", "channel.created", subject: cid,
              data: #"{"cid":"\#(cid)","members":[\#(members.map { "\"\($0)\"" }.joined(separator: ","))]}"#)
    }

    static func message(_ id: String, from user: String, in cid: String = "messaging:general") -> String {
        event("new-\(id)", "message.new", subject: cid,
              data: #"{"cid":"\#(cid)","message":{"id":"\#(id)","user_id":"\#(user)","created_at":"2026-11-22T03:10:00.000Z"}}"#)
    }

    /// `data` of a `message.read`.
    static func readData(_ user: String, _ message: String, in cid: String = "messaging:general") -> String {
        #"{"cid":"\#(cid)","user_id":"\#(user)","message_id":"\#(message)"}"#
    }

    static func read(_ user: String, _ message: String, in cid: String = "messaging:general") -> String {
        event("read-\(user)-\(message)", "message.read", subject: cid, data: readData(user, message, in: cid))
    }

    static func batch(_ events: [String]) -> [UInt8] { Array("[\(events.joined(separator: ","))]".utf8) }

    static let structured = ["Content-Type": "application/cloudevents+json"]
    static let batched = ["Content-Type": "application/cloudevents-batch+json"]
}
