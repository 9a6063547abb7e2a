import EventBus
import Synchronization

/// The connected websockets by user, and the SEQ of the last `out` event routed to them.
///
/// Registering a connection and routing an event take the same lock, so an event is
/// either routed before a connection registers (its SEQ is at or below the
/// ``Registration/routedSeq`` the connection got: the replay covers it) or offered
/// to the connection live.
public final class Hub: Sendable {
    private struct State {
        var byUser: [String: [UInt64: Connection]] = [:]
        var routedSeq: UInt64 = 0
        var count = 0
    }

    private let state = Mutex(State())

    /// Creates an empty hub.
    public init() {}

    /// The number of connections.
    public var connectionCount: Int { state.withLock { $0.count } }

    /// The SEQ of the last `out` event routed.
    public var routedSeq: UInt64 { state.withLock { $0.routedSeq } }

    /// Adds a connection made by `make`, which gets the SEQ of the last event routed before it.
    ///
    /// - Parameters:
    ///   - userID: The connection's user.
    ///   - make: Builds the connection from the last routed SEQ (called under the hub's lock).
    /// - Returns: The connection and that SEQ.
    public func register(userID: String, make: (UInt64) -> Connection) -> (connection: Connection, routedSeq: UInt64) {
        state.withLock { state in
            let connection = make(state.routedSeq)
            state.byUser[userID, default: [:]][connection.id] = connection
            state.count += 1
            return (connection, state.routedSeq)
        }
    }

    /// Removes a connection.
    public func unregister(_ connection: Connection) {
        state.withLock { state in
            if state.byUser[connection.userID]?.removeValue(forKey: connection.id) != nil { state.count -= 1 }
            if state.byUser[connection.userID]?.isEmpty == true { state.byUser[connection.userID] = nil }
        }
    }

    /// Offers `delivery` to every connection of `users` and records its SEQ as routed.
    ///
    /// - Parameters:
    ///   - delivery: The `out` event.
    ///   - users: The users it concerns.
    public func route(_ delivery: Delivery, to users: some Sequence<String>) {
        var frame: OutboundFrame?
        state.withLock { state in
            state.routedSeq = max(state.routedSeq, delivery.seq)
            for user in users {
                guard let connections = state.byUser[user] else { continue }
                let encoded = frame ?? OutboundFrame(delivery)
                frame = encoded
                for connection in connections.values { connection.offerLive(encoded) }
            }
        }
    }
}
