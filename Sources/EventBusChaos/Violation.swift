/// One broken rule the checker found, worded for the person who replays the seed.
public enum Violation: Sendable, Equatable, CustomStringConvertible {
    /// A confirmed event is not at its SEQ in `in` (`found`: what is there, if anything).
    case confirmedEventMissing(ConfirmedEvent, found: String?)
    /// Published events with no confirm recorded, although every publisher finished.
    case unconfirmed(count: Int, first: EventIdentity)
    /// One identity (stage, source, id) logged more than once.
    case duplicateIdentity(stage: String, source: String, id: String, seqs: [UInt64])
    /// The log's SEQs are not 1, 2, 3, …: `expected` is missing, `found` came instead.
    case seqGap(expected: UInt64, found: UInt64)
    /// The model could not fold an event of `in`.
    case modelFailed(seq: UInt64, error: String)
    /// A subject's events in `out` differ from the model's: the first differing position,
    /// what the model expected there and what the log holds (nil: nothing).
    case outDiffers(subject: String, index: Int, expected: String?, logged: String?)
    /// A watermark event of `out` names a message the channel's `message.new` events never did.
    case watermarkUnknownMessage(seq: UInt64, cid: String, user: String, message: String)
    /// A watermark in `out` did not move forward for (channel, user).
    case watermarkBackwards(seq: UInt64, type: String, cid: String, user: String, from: String, to: String)
    /// A query's answer differs from the model's answer at the query's place in the log.
    case queryDiffers(method: String, params: String, expected: String, answered: String)
    /// A query that was answered has no `query` event in `in`.
    case queryNotLogged(method: String, params: String)
    /// The observer received a SEQ that is no event of `out` it may receive, or other bytes.
    case deliveryNotInOut(seq: UInt64)
    /// Within one attachment the observer got `found` where the next event of `out` was `expected`.
    case deliveryGap(expected: UInt64?, found: UInt64)
    /// After (re)attaching, the first event was not the one right after an ACK the observer sent.
    case resumeNotAfterAck(first: UInt64, lastAck: UInt64)
    /// After (re)attaching, the first event came before one the broker had taken an ACK for.
    case resumeRepeatsTakenAck(first: UInt64, takenAck: UInt64)
    /// Events of `out` the observer never received although it caught up.
    case observerMissed(count: Int, first: UInt64)
    /// Something a hostile peer sent is in the log (``HostileMessages``).
    case hostileEventLogged(seq: UInt64, topic: String, id: String)
    /// `eventbus up` held more than docs/operations.md's bound at its peak.
    case memoryOverBound(peakBytes: Int, bound: BrokerMemoryBound)

    public var description: String {
        switch self {
        case .confirmedEventMissing(let event, let found):
            "confirmed event \(event.source) \(event.id) (SEQ \(event.seq)) is not in `in`: SEQ \(event.seq) holds \(found ?? "nothing")"
        case .unconfirmed(let count, let first):
            "\(count) published events were never confirmed, the first \(first.source) \(first.id)"
        case .duplicateIdentity(let stage, let source, let id, let seqs):
            "duplicate: \(stage) \(source) \(id) is logged \(seqs.count) times, at SEQs \(seqs.map(String.init).joined(separator: ", "))"
        case .seqGap(let expected, let found):
            "SEQ gap: SEQ \(expected) is missing, the log goes on with \(found)"
        case .modelFailed(let seq, let error):
            "the model could not fold SEQ \(seq) of `in`: \(error)"
        case .outDiffers(let subject, let index, let expected, let logged):
            "out differs from the model for \(subject) at its event #\(index): expected \(expected ?? "nothing"), logged \(logged ?? "nothing")"
        case .watermarkUnknownMessage(let seq, let cid, let user, let message):
            "watermark at SEQ \(seq) for (\(cid), \(user)) names \(message), which no message.new of \(cid) in out named"
        case .watermarkBackwards(let seq, let type, let cid, let user, let from, let to):
            "watermark moved backwards: \(type) at SEQ \(seq) for (\(cid), \(user)) went from \(from) to \(to)"
        case .queryDiffers(let method, let params, let expected, let answered):
            "query \(method) \(params): the model answers \(expected), the bus answered \(answered)"
        case .queryNotLogged(let method, let params):
            "query \(method) \(params) was answered but no query event of `in` asked it"
        case .deliveryNotInOut(let seq):
            "the observer received SEQ \(seq), which is no event of out it may receive (or its bytes differ)"
        case .deliveryGap(let expected, let found):
            "delivery gap: the observer got SEQ \(found) where SEQ \(expected.map(String.init) ?? "nothing") of out came next"
        case .resumeNotAfterAck(let first, let lastAck):
            "resume: the first SEQ after attaching was \(first), not the event right after an ACK sent (last ACK \(lastAck))"
        case .resumeRepeatsTakenAck(let first, let takenAck):
            "resume: the first SEQ after attaching was \(first), at or before SEQ \(takenAck), whose ACK the broker had taken"
        case .observerMissed(let count, let first):
            "the observer never received \(count) events of out, the first at SEQ \(first)"
        case .hostileEventLogged(let seq, let topic, let id):
            "SEQ \(seq) (\(topic), id \(id)) is an event a hostile peer sent: the broker should have refused it"
        case .memoryOverBound(let peak, let bound):
            "memory: eventbus up peaked at \(peak / 1_048_576) MiB, over its bound of \(bound.bytes / 1_048_576) MiB "
                + "(\(bound.readyBytes / 1_048_576) MiB when ready, \(bound.records) records of \(bound.loggedBytes / 1_048_576) MiB logged)"
        }
    }
}
