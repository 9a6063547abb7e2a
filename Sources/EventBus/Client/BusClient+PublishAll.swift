extension BusClient {
    /// Publishes many events as a pipeline of `PUB` batches, up to `window` in flight,
    /// logged in the order given.
    ///
    /// Events are cut into batches of at most `batchSize` events (capped at 1,000) and
    /// 4 MiB. Batches are handed to the connection one after another, each only once the
    /// one before it is on its way, and their confirms are awaited together: the broker
    /// reads one connection's commands in order, so the log holds the events in the order
    /// of `events` (a reconnect resends what is waiting in the same order).
    ///
    /// Batches are atomic each, not together. When one fails, no later batch is sent; the
    /// batches before it are in the log, so what was logged is `events[..<A]` where the
    /// error names `events A-B`, plus any batch that was already in flight behind the
    /// failing one (at most `window - 1`; the error names them). Publishing again from A
    /// is safe: the broker deduplicates, and answers what it has with the original SEQs.
    ///
    /// - Parameters:
    ///   - events: CloudEvents JSON, any number.
    ///   - stage: The stage to publish to.
    ///   - batchSize: The most events per `PUB`.
    ///   - window: The most `PUB`s waiting for their reply at once.
    ///   - progress: Called with the number of events confirmed so far, in order.
    /// - Returns: The SEQ of each event, in the order of `events` (ascending).
    /// - Throws: The first failing batch's error; its message starts with
    ///   `events A-B: ` (0-based indices into `events`), read back by ``failedEventRange(of:)``.
    public func publishAll(
        _ events: [[UInt8]], stage: String = "in", batchSize: Int = 500, window: Int = 8,
        progress: (@Sendable (Int) -> Void)? = nil
    ) async throws(BusError) -> [UInt64] {
        let batches = Self.batches(of: events, batchSize: batchSize, maxBytes: WireProtocol.maxBatchBytes)
        var results = [Result<[UInt64], BusError>?](repeating: nil, count: batches.count)
        let stageBytes = Array(stage.utf8)
        await withTaskGroup(of: (Int, Result<[UInt64], BusError>).self) { group in
            var next = 0
            var confirmedPrefix = 0  // batches 0..<confirmedPrefix have their results
            var confirmed = 0
            var failed = false
            // Hands batch `next` to the connection and returns once it is queued there, so
            // that the next batch is queued behind it.
            func launch() async {
                let index = next
                let range = batches[index]
                next += 1
                await withCheckedContinuation { (queued: CheckedContinuation<Void, Never>) in
                    group.addTask {
                        let result = await self.submitPublish(Array(events[range]), stage: stageBytes) { queued.resume() }
                        return (index, result)
                    }
                }
            }
            while next < min(max(window, 1), batches.count) { await launch() }
            while let (index, result) = await group.next() {
                results[index] = result
                if case .failure = result { failed = true }
                while confirmedPrefix < batches.count, case .success(let seqs)? = results[confirmedPrefix] {
                    confirmed += seqs.count
                    confirmedPrefix += 1
                    progress?(confirmed)
                }
                if !failed && next < batches.count { await launch() }
            }
        }
        var seqs: [UInt64] = []
        seqs.reserveCapacity(events.count)
        for (index, result) in results.enumerated() {
            switch result {
            case .success(let batch)?:
                seqs += batch
            case .failure(let error)?:
                let range = batches[index]
                let logged = results[(index + 1)...].indices.filter { if case .success? = results[$0] { true } else { false } }
                var message = "events \(range.lowerBound)-\(range.upperBound - 1): \(error.message)"
                if let firstLogged = logged.first, let lastLogged = logged.last {
                    message += " (events \(batches[firstLogged].lowerBound)-\(batches[lastLogged].upperBound - 1) were already "
                        + "in flight and \(logged.count == 1 ? "one batch of them was" : "\(logged.count) batches of them were") logged; "
                        + "publishing again from event \(range.lowerBound) is safe)"
                }
                throw BusError(error.code, message)
            case nil:
                // Not sent: only after a failure, which the case above reports first.
                continue
            }
        }
        return seqs
    }

    /// Publishes one batch, calling `queued` once its request is in the connection's queue.
    private func submitPublish(
        _ events: [[UInt8]], stage: [UInt8], queued: @escaping @Sendable () -> Void
    ) async -> Result<[UInt64], BusError> {
        let io = self.io
        let reply: ClientIO.Reply = await withCheckedContinuation { continuation in
            if !io.submit(.request(.pub, [stage] + events, continuation)) {
                continuation.resume(returning: .failure(Self.closedError))
            }
            queued()
        }
        return reply.flatMap { ClientFrames.parseSeqs($0, expected: events.count) }
    }

    /// The indices (into the `events` given to ``publishAll(_:stage:batchSize:window:progress:)``)
    /// of the batch an error of it names, or `nil` for another error.
    public static func failedEventRange(of error: BusError) -> ClosedRange<Int>? {
        guard error.message.hasPrefix("events "),
              let colon = error.message.firstIndex(of: ":") else { return nil }
        let bounds = error.message[error.message.index(error.message.startIndex, offsetBy: 7)..<colon]
            .split(separator: "-").compactMap { Int($0) }
        guard bounds.count == 2, bounds[0] <= bounds[1] else { return nil }
        return bounds[0]...bounds[1]
    }

    /// Cuts `events` into index ranges of at most `batchSize` (1-1,000) events and `maxBytes` bytes
    /// (an event over `maxBytes` goes alone, for the broker to refuse).
    static func batches(of events: [[UInt8]], batchSize: Int, maxBytes: Int) -> [Range<Int>] {
        let limit = min(max(batchSize, 1), WireProtocol.maxBatchEvents)
        var batches: [Range<Int>] = []
        var start = 0
        var bytes = 0
        for (index, event) in events.enumerated() {
            if index > start && (index - start == limit || bytes + event.count > maxBytes) {
                batches.append(start..<index)
                start = index
                bytes = 0
            }
            bytes += event.count
        }
        if start < events.count { batches.append(start..<events.count) }
        return batches
    }
}
