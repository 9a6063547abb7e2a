import Synchronization

/// What the tasks of one stream share: whether the client was cut, how many messages wait in
/// its buffer, and the SEQ of the last event written to it.
final class StreamSessionState: Sendable {
    private let isCut = Atomic(false)
    private let isStopping = Atomic(false)
    private let waiting = Atomic(0)
    private let last: Atomic<UInt64>

    init(after: UInt64) {
        last = Atomic(after)
    }

    /// Marks the client cut; true for the call that did.
    func cut() -> Bool { !isCut.exchange(true, ordering: .sequentiallyConsistent) }
    var wasCut: Bool { isCut.load(ordering: .sequentiallyConsistent) }

    /// Marks the stream ending with the server: the writer writes nothing more.
    func stop() { isStopping.store(true, ordering: .sequentiallyConsistent) }
    /// Whether the writer should stop: the client was cut, or the server is shutting down.
    var mustStop: Bool { wasCut || isStopping.load(ordering: .sequentiallyConsistent) }

    /// One more message in the buffer; the count after.
    func queued() -> Int { waiting.add(1, ordering: .relaxed).newValue }
    /// One message fewer in the buffer (taken by the writer, or not queued after all).
    func dequeued() { waiting.subtract(1, ordering: .relaxed) }
    /// Messages in the buffer.
    var buffered: Int { waiting.load(ordering: .relaxed) }

    /// The SEQ of the last event written: where the client resumes.
    var lastDelivered: UInt64 { last.load(ordering: .sequentiallyConsistent) }

    func delivered(_ seq: UInt64) { last.store(seq, ordering: .sequentiallyConsistent) }
}
