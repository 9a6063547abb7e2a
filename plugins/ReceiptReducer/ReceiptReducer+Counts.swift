import EventBusCore

/// A message's read and delivered counts: what `message_receipts` answers
/// (docs/events.md "Queries") and what `message.read` and `message.delivered`
/// carry for the message their watermark points at (rule 26), so that a
/// client keeps its "read by N" ticks without asking.
extension ReceiptReducer {
    /// A channel message's counts over the members it counts for: the current
    /// members but its sender and those who joined at or after it (rule 8),
    /// the members `visibility` hides left out. O(log n + log h).
    func channelTally(_ channel: ChannelState, _ position: Int32, _ visibility: Visibility)
        -> (others: Int, read: Int, delivered: Int, hidden: (read: Int, readFrom: Int, delivery: Int, deliveredFrom: Int, any: Int))
    {
        let everyone = channel.counts(at: position)
        let hidden = hiddenMembers(channel, visibility, sender: channel.sender(at: position), position: position)
        return (everyone.others, everyone.read - hidden.readFrom, everyone.delivered - hidden.deliveredFrom, hidden)
    }

    /// A thread reply's counts over the thread's participants who are members
    /// now, but its sender and those who joined the thread at or after it
    /// (rule 8), the members `visibility` hides left out. O(p).
    func threadTally(_ channel: ChannelState, _ t: Int, _ position: Int32, _ visibility: Visibility)
        -> (shownRead: [ThreadMember], shownDelivery: [ThreadMember], readers: [ThreadMember], delivered: [ThreadMember], hidden: Int)
    {
        let sender = channel.sender(at: position)
        let others = channel.threads[t].participants.filter {
            $0.user != sender && $0.joinedAt < position && channel.currentSlot(of: $0.user) != nil
        }
        let shownRead = others.filter { !visibility.hidesRead($0.user, userFlags) }
        let shownDelivery = others.filter { !visibility.hidesDelivery($0.user, userFlags) }
        let hidden = others.count { visibility.hidesRead($0.user, userFlags) || visibility.hidesDelivery($0.user, userFlags) }
        return (shownRead, shownDelivery, shownRead.filter { $0.readPosition >= position },
                shownDelivery.filter { $0.deliveredPosition >= position }, hidden)
    }

    /// The read and delivered counts of the message at `position` (a channel
    /// message or a thread reply) as `visibility` shows them.
    func receiptCounts(_ ci: Int, _ position: Int32, _ visibility: Visibility) -> (read: Int, delivered: Int) {
        if let t = channels[ci].thread(ofReply: position) {
            let tally = threadTally(channels[ci], t, position, visibility)
            return (tally.readers.count, tally.delivered.count)
        }
        // Nobody hidden (every receipt event's full counts): asked of the channel in place, since
        // passing `channels[ci]` on would copy it (a retain and a release of each of its arrays).
        if visibility.read == .shown && visibility.delivery == .shown {
            let everyone = channels[ci].counts(at: position)
            return (everyone.read, everyone.delivered)
        }
        let tally = channelTally(channels[ci], position, visibility)
        return (tally.read, tally.delivered)
    }

    /// Writes a watermark event's counts for the message at `position`:
    /// `read_count` (for `message.read` only) and `delivered_count`, over
    /// everyone, as a pipeline without filters shows them; then, if a member
    /// whose receipts are hidden from others counts in either, `redacted`
    /// with the count as others may see it — the privacy filters put it in
    /// place of the full one and take `redacted` away (docs/privacy.md).
    func writeReceiptCounts(_ writer: inout JSONWriter, _ ci: Int, position: Int32, read: Bool) {
        let full = receiptCounts(ci, position, Visibility())
        let type = typeFlags[channels[ci].typeName] ?? []
        // Nobody's receipts hidden (the usual channel): the views are the full counts.
        let hides = channels[ci].hiddenMembers > 0 || !type.isEmpty
        var redacted: [(key: StaticString, count: Int)] = []
        if read {
            writer.key(plain: "read_count"); writer.int(full.read)
            if hides {
                let mode: Visibility.Mode = type.contains(.readOff) ? .all : .bySetting
                let shown = receiptCounts(ci, position, Visibility(read: mode)).read
                if shown != full.read { redacted.append(("read_count", shown)) }
            }
        }
        writer.key(plain: "delivered_count"); writer.int(full.delivered)
        if hides {
            let mode: Visibility.Mode = type.contains(.deliveryOff) ? .all : .bySetting
            let shown = receiptCounts(ci, position, Visibility(delivery: mode)).delivered
            if shown != full.delivered { redacted.append(("delivered_count", shown)) }
        }
        guard !redacted.isEmpty else { return }
        writer.key(plain: "redacted")
        writer.beginObject()
        for (key, count) in redacted { writer.key(plain: key); writer.int(count) }
        writer.endObject()
    }
}
