import CNATS
import Synchronization

/// The JetStream async publishes that wait for their ack, keyed by the message.
///
/// libnats calls the ack handler on its own thread with the original `natsMsg`; the
/// handler finds the waiter here by the message's address, removes it and calls it (a
/// waiter resumes a continuation or hands the result to a queue), and does nothing else (no blocking, no publishing: a handler that blocks
/// stalls every publisher of the connection). The closures given to libnats are plain
/// numbers, looked up here, so a callback that comes late finds nothing rather than a
/// freed object.
final class AsyncAcks: Sendable {
    static let shared = AsyncAcks()

    /// Takes the outcome of one publish; called once, on a libnats thread or the publisher's.
    /// It only hands the result off: it must not block or publish.
    typealias Waiter = @Sendable (Result<PubAck, NATSError>) -> Void

    private struct Key: Hashable {
        let context: Int
        let message: UInt
    }

    private struct State {
        var nextID = 1
        /// JetStream context → its connection.
        var contexts: [Int: Int] = [:]
        var closedConnections: Set<Int> = []
        var waiters: [Key: Waiter] = [:]
    }

    private let state = Mutex(State())

    func newConnection() -> Int {
        state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }

    func newContext(connection: Int) -> Int {
        state.withLock { state in
            defer { state.nextID += 1 }
            state.contexts[state.nextID] = connection
            return state.nextID
        }
    }

    /// Registers `waiter` for `message`; `false` (and nothing registered) when the
    /// context's connection is closed already.
    func register(context: Int, message: OpaquePointer, _ waiter: @escaping Waiter) -> Bool {
        state.withLock { state in
            guard let connection = state.contexts[context], !state.closedConnections.contains(connection) else { return false }
            state.waiters[Key(context: context, message: UInt(bitPattern: Int(bitPattern: message)))] = waiter
            return true
        }
    }

    /// Removes and returns the waiter for `message`, if it still waits.
    func take(context: Int, message: OpaquePointer) -> Waiter? {
        state.withLock { state in
            state.waiters.removeValue(forKey: Key(context: context, message: UInt(bitPattern: Int(bitPattern: message))))
        }
    }

    /// Fails every waiter of `context` (the context is going away).
    func contextClosed(_ context: Int) {
        let waiters = state.withLock { state in
            state.contexts[context] = nil
            return removeWaiters(&state) { $0.context == context }
        }
        fail(waiters, "JetStream context closed")
    }

    /// Fails every waiter of a context on `connection`; later registrations fail at once.
    func connectionClosed(_ connection: Int) {
        let waiters = state.withLock { state in
            state.closedConnections.insert(connection)
            let contexts = Set(state.contexts.filter { $0.value == connection }.keys)
            return removeWaiters(&state) { contexts.contains($0.context) }
        }
        fail(waiters, "connection closed")
    }

    private func removeWaiters(_ state: inout State, where matches: (Key) -> Bool) -> [Waiter] {
        let keys = state.waiters.keys.filter(matches)
        return keys.compactMap { state.waiters.removeValue(forKey: $0) }
    }

    private func fail(_ waiters: [Waiter], _ text: String) {
        let error = NATSError(status: NATS_CONNECTION_CLOSED.rawValue, operation: "publish async", text: text)
        for waiter in waiters { waiter(.failure(error)) }
    }
}

/// libnats's ack handler for every JetStream context made here. With an `AckHandler` set,
/// libnats leaves the original message to the handler to destroy (unlike its `ErrHandler`).
let asyncAckHandler: jsPubAckHandler = { _, message, ack, ackError, closure in
    guard let message else { return }
    let context = Int(bitPattern: closure)
    // Taken before the message is destroyed, so that its address cannot be reused meanwhile.
    let waiter = AsyncAcks.shared.take(context: context, message: message)
    natsMsg_Destroy(message)
    guard let waiter else { return }
    if let ack {
        waiter(.success(PubAck(ack.pointee)))
    } else {
        let status = ackError?.pointee.Err ?? NATS_ERR
        let error = NATSError(
            status: status.rawValue,
            jetStreamCode: Int(ackError?.pointee.ErrCode.rawValue ?? 0),
            operation: "publish async",
            text: string(ackError?.pointee.ErrText) ?? "no ack")
        waiter(.failure(error))
    }
}
