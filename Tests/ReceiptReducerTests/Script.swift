import EventBusCore
import ReceiptReducer

/// A reducer driven by a test, one event at a time, with consecutive SEQs and times.
struct Script {
    var reducer = ReceiptReducer()
    var seq: UInt64 = 0
    var clock = 0

    /// The time the next event will carry.
    var nextTime: String { EventGenerator.time((clock + 1) * 1000) }

    @discardableResult
    mutating func send(_ payload: IngressPayload, data: JSONValue? = nil) -> [ReducerOutput] {
        seq += 1
        clock += 1
        return reducer.apply(ReducerInput(seq: seq, time: EventGenerator.time(clock * 1000), payload: payload, data: data))
    }

    @discardableResult
    mutating func create(_ cid: String, _ members: [String]) -> [ReducerOutput] {
        send(.channelCreated(cid: cid, members: members))
    }

    @discardableResult
    mutating func message(_ cid: String, _ id: String, from user: String, kind: NewMessage.Kind = .regular,
                          silent: Bool = false) -> [ReducerOutput] {
        send(.messageNew(cid: cid, message: NewMessage(id: id, userID: user, createdAt: nextTime, kind: kind, silent: silent)))
    }

    @discardableResult
    mutating func read(_ cid: String, _ user: String, _ id: String, at: String? = nil) -> [ReducerOutput] {
        send(.messageRead(cid: cid, userID: user, messageID: id, readAt: at))
    }

    @discardableResult
    mutating func delivered(_ cid: String, _ user: String, _ id: String, at: String? = nil) -> [ReducerOutput] {
        send(.messageDelivered(cid: cid, userID: user, messageID: id, deliveredAt: at))
    }

    @discardableResult
    mutating func markRead(_ cid: String, _ user: String) -> [ReducerOutput] {
        send(.notificationMarkRead(cid: cid, userID: user, readAt: nil))
    }

    @discardableResult
    mutating func markUnread(_ cid: String, _ user: String, _ id: String) -> [ReducerOutput] {
        send(.notificationMarkUnread(cid: cid, userID: user, messageID: id))
    }

    func unread(_ cid: String, _ user: String) -> Int? { reducer.unreadMessages(cid: cid, userID: user) }

    func query(_ method: String, _ params: [(String, JSONValue)]) throws -> JSONValue {
        try JSONParser.parse(reducer.query(method: method, params: .object(params.map { (key: $0.0, value: $0.1) })))
    }

    func queryError(_ method: String, _ params: JSONValue) -> QueryError? {
        do {
            _ = try reducer.query(method: method, params: params)
            return nil
        } catch {
            return error
        }
    }
}

extension ReducerOutput {
    /// The data parsed (a test helper; outputs are always valid JSON).
    var json: JSONValue { (try? JSONParser.parse(data)) ?? .null }

    /// The data object's keys, in order.
    var keys: [String] {
        guard case .object(let members) = json else { return [] }
        return members.map(\.key)
    }
}

/// `.number` from an Int, for expectations.
func num(_ value: Int) -> JSONValue { .number(String(value)) }
