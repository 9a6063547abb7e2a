import DequeModule
import EventBus
import Synchronization

/// One websocket connection's outbound queue: bounded, in SEQ order, without duplicates.
///
/// The hub and the replay offer frames; the connection's writer task iterates ``frames``.
/// A frame whose SEQ is not above the last one queued is dropped, so live events and a
/// replay that overlap never duplicate. While a replay runs, live frames wait in a
/// pending list. When more than `capacity` frames wait (a client that does not read),
/// the queue ends with ``overflowed`` set: the writer closes the websocket with
/// ``Connection/overflowCloseCode`` and the client reconnects with its last SEQ.
public final class Connection: Sendable {
    /// The close code sent to a client that fell too far behind: reconnect with `last_seq`.
    public static let overflowCloseCode: UInt16 = 4008

    /// The connection's id, unique in this gateway.
    public let id: UInt64
    /// The user the connection belongs to.
    public let userID: String
    /// The frames to send, in order; ends when the connection is closed or overflows.
    public let frames: AsyncStream<String>

    private let continuation: AsyncStream<String>.Continuation
    private let capacity: Int
    private let state: Mutex<State>

    private struct State {
        var lastSeq: UInt64
        var replaying: Bool
        var pending: Deque<OutboundFrame> = []
        var overflowed = false
        var finished = false
    }

    /// Creates a connection.
    ///
    /// - Parameters:
    ///   - id: Its id.
    ///   - userID: Its user.
    ///   - lastSeq: The last SEQ the client saw: nothing at or below it is sent.
    ///   - replaying: Whether live frames must wait until ``finishReplay()``.
    ///   - capacity: The most frames that may wait to be sent.
    public init(id: UInt64, userID: String, lastSeq: UInt64, replaying: Bool, capacity: Int) {
        self.id = id
        self.userID = userID
        self.capacity = max(capacity, 1)
        (frames, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(max(capacity, 1)))
        state = Mutex(State(lastSeq: lastSeq, replaying: replaying))
    }

    /// Whether the queue ended because the client did not keep up.
    public var overflowed: Bool { state.withLock { $0.overflowed } }

    /// The SEQ of the last frame queued (or the client's `last_seq`).
    public var lastSeq: UInt64 { state.withLock { $0.lastSeq } }

    /// Offers a live event: queued now, or held while a replay runs.
    public func offerLive(_ delivery: Delivery) { offerLive(OutboundFrame(delivery)) }

    /// Offers a live event already encoded (the hub encodes each event once for all its connections).
    public func offerLive(_ delivery: OutboundFrame) {
        let overflow: Bool = state.withLock { state in
            guard !state.finished else { return false }
            if state.replaying {
                state.pending.append(delivery)
                return state.pending.count > capacity
            }
            return Self.enqueue(delivery, &state, continuation)
        }
        if overflow { end(overflowed: true) }
    }

    /// Offers an event read by the replay.
    public func offerReplay(_ delivery: Delivery) {
        let overflow: Bool = state.withLock { state in
            guard !state.finished else { return false }
            return Self.enqueue(OutboundFrame(delivery), &state, continuation)
        }
        if overflow { end(overflowed: true) }
    }

    /// Ends the replay: the held live frames above the last SEQ follow, and later ones go straight out.
    public func finishReplay() {
        let overflow: Bool = state.withLock { state in
            guard !state.finished else { return false }
            state.replaying = false
            while let delivery = state.pending.popFirst() {
                if Self.enqueue(delivery, &state, continuation) { return true }
            }
            return false
        }
        if overflow { end(overflowed: true) }
    }

    /// Ends the queue (the websocket closed); ``frames`` finishes.
    public func close() { end(overflowed: false) }

    private func end(overflowed: Bool) {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            state.overflowed = overflowed
            state.pending.removeAll()
        }
        continuation.finish()
    }

    /// Queues `delivery` unless it is at or below the last SEQ; returns `true` when the queue is full.
    private static func enqueue(_ frame: OutboundFrame, _ state: inout State, _ continuation: AsyncStream<String>.Continuation) -> Bool {
        guard frame.seq > state.lastSeq else { return false }
        state.lastSeq = frame.seq
        if case .dropped = continuation.yield(frame.text) { return true }
        return false
    }
}
