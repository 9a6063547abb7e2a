import DequeModule

/// The runner's published output that awaits its confirms, batch by batch.
///
/// A batch of input events becomes one or more PUBs (chunks within the PUB
/// limits). The runner sends them at once and goes on with the next batch;
/// this window remembers which PUB (by request number, its CORR) belongs to which batch, and
/// hands back the batches whose every PUB is confirmed, oldest first — only
/// those may be ACKed, since an ACK says that the input's output is safe.
struct PublishWindow {
    /// One PUB's worth of events for one stage.
    struct Chunk {
        let stage: String
        let events: ArraySlice<OutgoingEvent>
        var confirmed = false
        /// Times it was sent.
        var attempts = 0
    }

    /// The output of one batch of input events.
    struct Batch {
        /// The SEQ of the batch's last input event: what its ACK names.
        let lastSeq: UInt64
        /// Input events handled.
        let inputs: Int
        /// Events sent to the output stage and to `diag`.
        let forwarded: Int
        let diagnostics: Int
        /// When handling began (for the batch timer).
        let started: ContinuousClock.Instant
        var chunks: [Chunk]
        /// Chunks not yet confirmed.
        var unconfirmed: Int
        /// When a chunk of it was last sent.
        var sentAt: ContinuousClock.Instant
    }

    /// Where a chunk sits: batch number (counted from the first batch ever added) and chunk index.
    struct Place: Hashable {
        let batch: Int
        let chunk: Int
    }

    private(set) var batches: Deque<Batch> = []
    /// The number of `batches.first`.
    private var firstNumber = 0
    private var places: [UInt64: Place] = [:]

    var isEmpty: Bool { batches.isEmpty }
    var count: Int { batches.count }
    /// Input events whose batches await their confirms (not yet ACKed).
    private(set) var inputs = 0

    /// Whether the next batch, of up to `batchSize` input events, may join the window.
    ///
    /// The window is as deep as the consumer's credit (the input events the broker sends
    /// ahead of the ACK), not a constant count of batches: the slower the broker's commit
    /// (a slow disk's fsync), the more output each commit covers, instead of the plugin
    /// stalling with a few batches out. A window with nothing in it always has room.
    func hasRoom(batchSize: Int, credit: Int) -> Bool {
        batches.isEmpty || inputs + batchSize <= credit
    }

    /// Splits a batch's output into PUB-sized chunks and adds it; returns the places to send.
    mutating func add(lastSeq: UInt64, inputs: Int, started: ContinuousClock.Instant,
                      outputs: [(stage: String, events: [OutgoingEvent])], maxEvents: Int, maxBytes: Int) -> [Place] {
        var chunks: [Chunk] = []
        for (stage, events) in outputs where !events.isEmpty {
            var start = 0, bytes = 0
            for (index, event) in events.enumerated() {
                // A reference appends the bytes it names: those count, not the frame's.
                if index > start && (index - start == maxEvents || bytes + event.bytes.count > maxBytes) {
                    chunks.append(Chunk(stage: stage, events: events[start..<index]))
                    start = index
                    bytes = 0
                }
                bytes += event.bytes.count
            }
            chunks.append(Chunk(stage: stage, events: events[start...]))
        }
        let forwarded = outputs.first?.events.count ?? 0
        let diagnostics = outputs.dropFirst().reduce(0) { $0 + $1.events.count }
        self.inputs += inputs
        batches.append(Batch(lastSeq: lastSeq, inputs: inputs, forwarded: forwarded, diagnostics: diagnostics,
                             started: started, chunks: chunks, unconfirmed: chunks.count, sentAt: started))
        let number = firstNumber + batches.count - 1
        return chunks.indices.map { Place(batch: number, chunk: $0) }
    }

    /// The chunk at `place`.
    func chunk(_ place: Place) -> Chunk { batches[place.batch - firstNumber].chunks[place.chunk] }

    /// Records that the chunk at `place` went out at `now` as the PUB of request `number`.
    mutating func sent(_ place: Place, request number: UInt64, now: ContinuousClock.Instant) {
        places[number] = place
        batches[place.batch - firstNumber].chunks[place.chunk].attempts += 1
        batches[place.batch - firstNumber].sentAt = now
    }

    /// The chunk a reply to request `number` answers, if it is one of ours; forgets the request.
    mutating func answered(request number: UInt64) -> Place? {
        places.removeValue(forKey: number)
    }

    /// Whether request `number` is a PUB of this window.
    func isAwaited(request number: UInt64) -> Bool { places[number] != nil }

    /// Whether the chunk at `place` is still in the window and unconfirmed.
    func isUnconfirmed(_ place: Place) -> Bool {
        let index = place.batch - firstNumber
        return index >= 0 && index < batches.count && !batches[index].chunks[place.chunk].confirmed
    }

    /// Records the confirm of the chunk at `place`.
    mutating func confirm(_ place: Place) {
        let index = place.batch - firstNumber
        guard !batches[index].chunks[place.chunk].confirmed else { return }
        batches[index].chunks[place.chunk].confirmed = true
        batches[index].unconfirmed -= 1
    }

    /// Removes and returns the oldest batches whose output is all confirmed.
    mutating func removeSettled() -> [Batch] {
        var settled: [Batch] = []
        while let first = batches.first, first.unconfirmed == 0 {
            inputs -= first.inputs
            settled.append(batches.removeFirst())
            firstNumber += 1
        }
        return settled
    }

    /// When the batch waiting longest for a confirm last sent one.
    var oldestSend: ContinuousClock.Instant? {
        batches.lazy.filter { $0.unconfirmed > 0 }.map(\.sentAt).min()
    }

    /// Forgets which requests the chunks went out as: their connection is gone, and no reply to them will come.
    mutating func forgetRequests() {
        places.removeAll()
    }

    /// Every unconfirmed chunk, in order, forgetting their requests (to send again after a reconnect).
    mutating func unconfirmedForResend() -> [Place] {
        places.removeAll()
        var result: [Place] = []
        for (offset, batch) in batches.enumerated() {
            for (index, chunk) in batch.chunks.enumerated() where !chunk.confirmed {
                result.append(Place(batch: firstNumber + offset, chunk: index))
            }
        }
        return result
    }
}
