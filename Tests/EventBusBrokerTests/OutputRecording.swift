import ZeroMQ

@testable import EventBusBroker

/// A ``BrokerOutput`` that keeps what the core sends as plain values: each
/// message to a peer as its frames, each stream message, each subscription.
/// Peers in ``fullPeers`` refuse messages as a full libzmq queue would.
final class OutputRecording: BrokerOutput {
    /// One message the core sent to a peer.
    struct Message: Equatable {
        let peer: [UInt8]
        /// The frames after the routing id: signature, verb, then the rest.
        let frames: [[UInt8]]

        var verb: String { frames.count > 1 ? String(decoding: frames[1], as: UTF8.self) : "" }
        var correlation: String { frames.count > 2 ? String(decoding: frames[2], as: UTF8.self) : "" }
        /// Frames from the fourth on, as text.
        var arguments: [String] { frames.dropFirst(3).map { String(decoding: $0, as: UTF8.self) } }
    }

    private(set) var messages: [Message] = []
    private(set) var published: [[[UInt8]]] = []
    private(set) var subscriptions: [(prefix: [UInt8], on: Bool)] = []
    var fullPeers: Set<[UInt8]> = []
    /// When set, the stream has a full subscriber: a publish without dropping is refused.
    var streamFull = false
    private var building: [[UInt8]] = []

    /// The messages sent since the last call, all peers.
    func take() -> [Message] {
        defer { messages.removeAll() }
        return messages
    }

    private func frame(_ bytes: [UInt8], more: Bool) -> Bool {
        if building.isEmpty && fullPeers.contains(bytes) { return false }
        building.append(bytes)
        if !more {
            messages.append(Message(peer: building[0], frames: Array(building.dropFirst())))
            building.removeAll()
        }
        return true
    }

    func sendFrame(_ bytes: [UInt8], more: Bool) throws(ZMQError) -> Bool { frame(bytes, more: more) }

    func sendFrame(_ bytes: UnsafeRawBufferPointer, more: Bool) throws(ZMQError) -> Bool { frame(Array(bytes), more: more) }

    func sendFrame(size: Int, more: Bool, fill: (UnsafeMutableRawBufferPointer) -> Void) throws(ZMQError) -> Bool {
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBytes(fill)
        return frame(bytes, more: more)
    }

    func send(to peer: [UInt8], _ frames: [[UInt8]]) throws(ZMQError) -> Bool {
        guard !fullPeers.contains(peer) else { return false }
        messages.append(Message(peer: peer, frames: frames))
        return true
    }

    func publish(topic: [UInt8], seq: UInt64, event: [UInt8], dropIfFull: Bool) throws(ZMQError) -> Bool {
        if streamFull && !dropIfFull { return false }
        var bigEndian = seq.bigEndian
        published.append([topic, withUnsafeBytes(of: &bigEndian) { Array($0) }, event])
        return true
    }

    func subscribe(_ prefix: [UInt8], _ on: Bool) throws(ZMQError) {
        subscriptions.append((prefix, on))
    }
}

/// A ``BrokerClock`` that moves only when a test says so.
final class ManualClock: BrokerClock {
    var wall: UInt64 = 1_795_000_000_000
    var monotonic: UInt64 = 1_000_000

    func advance(milliseconds: UInt64) {
        wall += milliseconds
        monotonic += milliseconds
    }

    func wallMilliseconds() -> UInt64 { wall }
    func monotonicMilliseconds() -> UInt64 { monotonic }
    func monotonicNanoseconds() -> UInt64 { monotonic * 1_000_000 }
}
