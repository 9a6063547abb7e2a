/// The backend's message storage: in memory, per channel, in send order.
///
/// Stands in for a real backend's database. A message is stored before its
/// `message.new` is published, so a retried send (same message id) finds it and
/// publishes the very same event again.
actor MessageStore {
    private var messages: [String: [StoredMessage]] = [:]

    /// Stores `message` in `cid` unless the channel has one with its id; returns the stored one.
    func insert(_ message: StoredMessage, cid: String) -> StoredMessage {
        if let existing = messages[cid]?.first(where: { $0.id == message.id }) { return existing }
        messages[cid, default: []].append(message)
        return message
    }

    /// Removes the message `id` of `cid`.
    func remove(_ id: String, cid: String) {
        messages[cid]?.removeAll { $0.id == id }
    }

    /// The messages of `cid`, oldest first.
    func messages(in cid: String) -> [StoredMessage] {
        messages[cid] ?? []
    }
}
