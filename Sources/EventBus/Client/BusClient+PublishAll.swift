extension BusClient {
    /// Publishes many events as a pipeline of `PUB` batches, up to `window` in flight.
    ///
    /// Events are cut into batches of at most `batchSize` events (capped at 1,000) and
    /// 4 MiB. Batches are atomic each, not together: when one fails, the batches before
    /// it may already be in the log (publishing again is safe: the broker deduplicates).
    ///
    /// - Parameters:
    ///   - events: CloudEvents JSON, any number.
    ///   - stage: The stage to publish to.
    ///   - batchSize: The most events per `PUB`.
    ///   - window: The most `PUB`s waiting for their reply at once.
    ///   - progress: Called with the number of events confirmed so far, after each batch.
    /// - Returns: The SEQ of each event, in the order of `events`.
    /// - Throws: The first failing batch's error; its message starts with
    ///   `events A-B: ` (0-based indices into `events`), read back by ``failedEventRange(of:)``.
    public func publishAll(
        _ events: [[UInt8]], stage: String = "in", batchSize: Int = 500, window: Int = 8,
        progress: (@Sendable (Int) -> Void)? = nil
    ) async throws(BusError) -> [UInt64] {
        let batches = Self.batches(of: events, batchSize: batchSize, maxBytes: WireProtocol.maxBatchBytes)
        var results = [[UInt64]](repeating: [], count: batches.count)
        var failure: BusError?
        await withTaskGroup(of: (Int, Result<[UInt64], BusError>).self) { group in
            var next = 0
            var confirmed = 0
            func launch() {
                let index = next
                let range = batches[index]
                next += 1
                group.addTask {
                    do throws(BusError) {
                        return (index, .success(try await self.publish(Array(events[range]), stage: stage)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            while next < min(max(window, 1), batches.count) { launch() }
            while let (index, result) = await group.next() {
                switch result {
                case .success(let seqs):
                    results[index] = seqs
                    confirmed += seqs.count
                    progress?(confirmed)
                    if next < batches.count { launch() }
                case .failure(let error):
                    let range = batches[index]
                    failure = BusError(error.code, "events \(range.lowerBound)-\(range.upperBound - 1): \(error.message)")
                    group.cancelAll()
                    return
                }
            }
        }
        if let failure { throw failure }
        return results.flatMap { $0 }
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
