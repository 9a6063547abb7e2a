import NATS

/// JetStream's answer to a batch, read for ``OrderedPublisher``.
enum JetStreamAnswer {
    /// Codes after which nothing was stored and the batch may be sent again shortly.
    static let retryableCodes: Set<Int> = [
        AtomicPublish.duplicateInProcess, AtomicPublish.incomplete, AtomicPublish.tooManyInflight,
        10175,  // JSAtomicPublishMissingSeqErr: the server lost the start of the batch
    ]

    static func batch(_ result: Result<PubAck, NATSError>) -> OrderedPublisher.BatchResult {
        switch result {
        case .success(let ack):
            return .stored(lastSequence: ack.sequence)
        case .failure(let error):
            if error.jetStreamCode == AtomicPublish.containsDuplicate { return .duplicate }
            if retryableCodes.contains(error.jetStreamCode) || error.isNoResponders {
                return .retryable("\(error)")
            }
            return .failed("\(error)")
        }
    }
}
