/// Rule 7 of ``ChaosChecker``, on the observer (a durable consumer of `out` that ACKs as it
/// goes and attaches again after every broken connection), from docs/protocol.md "Consuming":
///
/// - every delivery is an event of `out` a consumer may receive, with the logged bytes;
/// - within one attachment, each delivery is the next such event after the one before: no
///   gap, no reordering;
/// - the first delivery after attaching is the event right after an ACK the observer sent
///   (the first event if it never ACKed): it resumes exactly after an ACK;
/// - and not before an ACK the broker had taken (a PING after it was answered), unless the
///   broker crashed within ``ackLossWindow`` after it took it, or its disk was failing
///   then: the offsets of the last ~200 ms (or since the disk failed) may be lost, and
///   those events come again (same SEQs);
/// - once caught up, it has received every such event of `out`.
enum ResumeRule {
    /// How long before a crash a taken ACK may be lost: the documented ~200 ms, with room for
    /// a machine shared with builds.
    static let ackLossWindow = 1.0

    static func check(_ log: ObserverLog, _ records: [LoggedRecord]) -> [Violation] {
        let deliverable = records.filter(\.isDeliveredFromOut).sorted { $0.seq < $1.seq }
        let seqs = deliverable.map(\.seq)
        let bytes = Dictionary(deliverable.map { ($0.seq, $0.event) }, uniquingKeysWith: { first, _ in first })
        func next(after seq: UInt64) -> UInt64? {
            var low = 0, high = seqs.count
            while low < high {
                let mid = (low + high) / 2
                if seqs[mid] <= seq { low = mid + 1 } else { high = mid }
            }
            return low < seqs.count ? seqs[low] : nil
        }
        var violations: [Violation] = []
        var acks: Set<UInt64> = [0]
        var lastAck: UInt64 = 0
        var taken: [(seq: UInt64, at: Double)] = []
        var crashes: [(from: Double, to: Double)] = []
        var previous: UInt64?
        var attachedAnew = false
        var received = Set<UInt64>()
        for step in log.steps {
            switch step {
            case .attached:
                attachedAnew = true
                previous = nil
            case .acked(let seq):
                acks.insert(seq)
                lastAck = max(lastAck, seq)
            case .ackTaken(let seq, let at):
                taken.append((seq, at))
            case .brokerCrashed(let from, let to):
                crashes.append((from, to))
            case .delivered(let seq, let event):
                if bytes[seq] != event { violations.append(.deliveryNotInOut(seq: seq)) }
                if attachedAnew {
                    attachedAnew = false
                    if !acks.contains(where: { next(after: $0) == seq }) {
                        violations.append(.resumeNotAfterAck(first: seq, lastAck: lastAck))
                    }
                    // The highest ACK the broker took that no later crash can have lost.
                    let safe = taken.filter { ack in !crashes.contains { ack.at > $0.from - ackLossWindow && ack.at <= $0.to } }
                    if let floor = safe.map(\.seq).max(), seq <= floor {
                        violations.append(.resumeRepeatsTakenAck(first: seq, takenAck: floor))
                    }
                } else if let previous, next(after: previous) != seq {
                    violations.append(.deliveryGap(expected: next(after: previous), found: seq))
                }
                previous = seq
                received.insert(seq)
            }
        }
        let missed = seqs.filter { !received.contains($0) }
        if let first = missed.first { violations.append(.observerMissed(count: missed.count, first: first)) }
        return violations
    }
}
