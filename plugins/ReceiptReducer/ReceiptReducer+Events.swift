import EventBusCore

extension ReceiptReducer {
    // MARK: Membership

    mutating func channelCreated(_ input: ReducerInput, cid: String, members: [String]) -> [ReducerOutput] {
        let ci: Int
        if let existing = channelIndex[cid] {
            ci = Int(existing)
        } else {
            ci = channels.count
            channels.append(ChannelState(cid: cid))
            channelIndex[cid] = Int32(ci)
        }
        let time = timeCode(nil, input)
        for userID in members {
            join(ci, intern(userID), time: time)
        }
        return []
    }

    /// `member.added`: tells the new member's devices their counts
    /// (`notification.added_to_channel`, rule 21).
    mutating func memberAdded(_ input: ReducerInput, cid: String, userID: String) -> [ReducerOutput] {
        guard let ci = channelIndex[cid].map({ Int($0) }) else {
            return [reject(input, cid: cid, userID: userID, messageID: nil, .unknownChannel)]
        }
        let user = intern(userID)
        guard join(ci, user, time: timeCode(nil, input)) else { return [] }
        return [countsEvent(.addedToChannel, cid: cid, user: user, ci: ci, slot: channels[ci].slot(of: user))]
    }

    /// `member.removed`: tells the former member's devices their new totals
    /// (`notification.removed_from_channel`, rule 21).
    mutating func memberRemoved(_ input: ReducerInput, cid: String, userID: String) -> [ReducerOutput] {
        guard let ci = channelIndex[cid] else {
            return [reject(input, cid: cid, userID: userID, messageID: nil, .unknownChannel)]
        }
        guard let user = userIndex[userID] else { return [] }
        guard channels[Int(ci)].removeMember(user, users, flags: userFlags[Int(user)]) else { return [] }
        if let i = userChannels[Int(user)].firstIndex(of: Int32(ci)) {
            userChannels[Int(user)].remove(at: i)
        }
        return [countsEvent(.removedFromChannel, cid: cid, user: user, ci: Int(ci), slot: nil)]
    }

    /// `member.updated`: the member's mute and count preference for the channel; a key left
    /// out keeps its value. Emits nothing (the totals change: the next notification or query shows it).
    mutating func memberUpdated(
        _ input: ReducerInput, cid: String, userID: String, muted: Bool?, countUnread: CountPreference?
    ) -> [ReducerOutput] {
        switch resolve(cid, userID, nil, acking: false) {
        case .failure(let reason):
            return [reject(input, cid: cid, userID: userID, messageID: nil, reason)]
        case .success(let target):
            if let muted { channels[target.ci].members[Int(target.slot)].muted = muted }
            if let countUnread { channels[target.ci].members[Int(target.slot)].countUnread = countUnread }
            return []
        }
    }

    @discardableResult
    private mutating func join(_ ci: Int, _ user: UInt32, time: Int64) -> Bool {
        if channels[ci].addMember(user, time: time, users, flags: userFlags[Int(user)]) {
            userChannels[Int(user)].append(Int32(ci))
            return true
        }
        return false
    }

    // MARK: Messages

    mutating func messageNew(_ input: ReducerInput, cid: String, message: NewMessage) -> [ReducerOutput] {
        guard let ci = channelIndex[cid].map({ Int($0) }) else {
            return [reject(input, cid: cid, userID: message.userID, messageID: message.id, .unknownChannel)]
        }
        // A repeated message id changes nothing (the backend retried).
        guard channels[ci].messageIndex.position(of: message.id, in: channels[ci].messageIDs) == nil else {
            return []
        }
        // A reply names its parent; a reply to a reply is in its parent's thread.
        var root: Int32?
        if let parentID = message.parentID {
            guard let parent = channels[ci].messageIndex.position(of: parentID, in: channels[ci].messageIDs) else {
                return [reject(input, cid: cid, userID: message.userID, messageID: parentID, .unknownMessage)]
            }
            root = channels[ci].thread(ofReply: parent).map { channels[ci].threads[$0].parent } ?? parent
        }
        let inChannel = root == nil || message.showInChannel
        let sender = intern(message.userID)
        // Each mentioned user once, not the sender: a set, so a message naming thousands stays linear.
        var mentioned: [UInt32] = []
        if !message.mentionedUsers.isEmpty {
            var seen: Set<UInt32> = [sender]
            for userID in message.mentionedUsers {
                let user = intern(userID)
                if seen.insert(user).inserted { mentioned.append(user) }
            }
        }
        let position = channels[ci].appendMessage(
            id: message.id, sender: sender, system: message.kind == .system, silent: message.silent,
            mentioned: mentioned, inChannel: inChannel)
        // Sending is not reading (rule 3): no watermark of the sender moves.
        // A channel message shows the channel again to those who hid it (rule 20).
        if inChannel && !channels[ci].hiddenSlots.isEmpty { _ = channels[ci].showToAll() }
        if let root {
            channels[ci].addReply(position, root: root, sender: sender, mentioned: mentioned, time: times.encode(message.createdAt))
        }
        let data = input.data?.serialized() ?? Self.messageNewData(cid: cid, message: message)
        let event = ReducerOutput(stage: "out", type: EventType.messageNew.wireName, subject: cid, data: data)
        let outputs = pushCountsUpTo > 0 ? [event] + messageNewNotices(ci, position: position, messageID: message.id) : [event]
        retain(ci)
        return outputs
    }

    /// Forgets the channel's oldest messages once it holds an eighth more than
    /// ``retainMessages`` (rule 25), down to that many; never its latest
    /// channel message (what a mark read reads up to), however many thread
    /// replies came after it.
    private mutating func retain(_ ci: Int) {
        guard retainMessages > 0, channels[ci].messageIDs.count >= ChannelState.retentionHigh(retainMessages) else { return }
        let oldest = min(Int32(channels[ci].messageIDs.count - retainMessages), channels[ci].latest)
        if oldest > 0 { channels[ci].forget(oldest: oldest) }
    }

    mutating func messageDeleted(_ input: ReducerInput, cid: String, messageID: String) -> [ReducerOutput] {
        guard let ci = channelIndex[cid].map({ Int($0) }) else {
            return [reject(input, cid: cid, userID: nil, messageID: messageID, .unknownChannel)]
        }
        guard let position = channels[ci].messageIndex.position(of: messageID, in: channels[ci].messageIDs) else {
            return [reject(input, cid: cid, userID: nil, messageID: messageID, .unknownMessage)]
        }
        // Whom the deletion changes a badge for (rule 21): the members it was unread for.
        let affected = channels[ci].unreadFor(position)
        guard channels[ci].deleteMessage(at: position) else { return [] }
        var writer = JSONWriter(capacity: 96)
        writer.beginObject()
        writer.key("cid"); writer.string(cid)
        writer.key("message_id"); writer.string(messageID)
        writer.endObject()
        let data = input.data?.serialized() ?? writer.bytes
        let notices = affected.sorted { users[Int($0.user)] < users[Int($1.user)] }.map { entry in
            countsEvent(.messageDeleted, cid: cid, user: entry.user, ci: ci, slot: entry.slot) { writer in
                writer.key(plain: "message_id"); writer.string(messageID)
            }
        }
        return [ReducerOutput(stage: "out", type: EventType.messageDeleted.wireName, subject: cid, data: data)] + notices
    }

    // MARK: Acks

    /// Resolves an ack's channel, member and (optionally) message, or the rejection.
    /// An ack (`acking`) by a banned user is rejected `banned`.
    func resolve(_ cid: String, _ userID: String, _ messageID: String?, acking: Bool = true)
        -> Result<(ci: Int, slot: Int32, user: UInt32, position: Int32), RejectionReason>
    {
        guard let ci = channelIndex[cid].map({ Int($0) }) else { return .failure(.unknownChannel) }
        guard let user = userIndex[userID], let slot = channels[ci].currentSlot(of: user) else {
            return .failure(.notMember)
        }
        if acking && isBanned(user, ci) { return .failure(.banned) }
        guard let messageID else { return .success((ci, slot, user, -1)) }
        guard let position = channels[ci].messageIndex.position(of: messageID, in: channels[ci].messageIDs) else {
            return .failure(.unknownMessage)
        }
        return .success((ci, slot, user, position))
    }

    mutating func messageDelivered(
        _ input: ReducerInput, cid: String, userID: String, messageID: String, at: String?
    ) -> [ReducerOutput] {
        let target: (ci: Int, slot: Int32, user: UInt32, position: Int32)
        switch resolve(cid, userID, messageID) {
        case .failure(let reason): return [reject(input, cid: cid, userID: userID, messageID: messageID, reason)]
        case .success(let found): target = found
        }
        if let t = channels[target.ci].thread(ofReply: target.position) {
            return threadDelivered(target.ci, t, target.user, to: target.position, time: timeCode(at, input), seq: input.seq)
        }
        let (ci, slot, position) = (target.ci, target.slot, target.position)
        var own = channels[ci].ownWatermarks(slot)
        let ownMoved = position > own.deliveredPosition
        guard ownMoved || position > channels[ci].members[Int(slot)].deliveredPosition else { return [] }
        let time = timeCode(at, input)
        if ownMoved { own.deliveredPosition = position }
        var outputs: [ReducerOutput] = []
        if position > channels[ci].members[Int(slot)].deliveredPosition {
            if shows(.deliveryOff, ci, target.user) {
                channels[ci].setDelivered(slot: slot, to: position, time: time, flags: userFlags[Int(target.user)])
                outputs.append(deliveredEvent(ci, slot))
            } else if ownMoved {
                // Hidden (rule 19): the public watermark stays, and nobody is told but the audit.
                outputs.append(suppressedEvent(seq: input.seq, ci, target.user, .messageDelivered))
            }
        }
        channels[ci].setOwn(own, slot: slot)
        return outputs
    }

    mutating func messageRead(
        _ input: ReducerInput, cid: String, userID: String, messageID: String, at: String?
    ) -> [ReducerOutput] {
        switch resolve(cid, userID, messageID) {
        case .failure(let reason):
            return [reject(input, cid: cid, userID: userID, messageID: messageID, reason)]
        case .success(let target):
            if let t = channels[target.ci].thread(ofReply: target.position) {
                return threadRead(target.ci, t, target.user, to: target.position, time: timeCode(at, input), seq: input.seq)
            }
            return readForward(target.ci, target.slot, target.user, to: target.position, time: timeCode(at, input), seq: input.seq)
        }
    }

    mutating func markRead(_ input: ReducerInput, cid: String, userID: String, at: String?) -> [ReducerOutput] {
        switch resolve(cid, userID, nil) {
        case .failure(let reason):
            return [reject(input, cid: cid, userID: userID, messageID: nil, reason)]
        case .success(let target):
            let latest = channels[target.ci].latest
            return readForward(target.ci, target.slot, target.user, to: latest, time: timeCode(at, input), seq: input.seq)
        }
    }

    /// A read ack or mark read to `position`: the own read watermark and,
    /// if the read is shown, the public one (rules 1, 2, 18 and 19). Emits
    /// `message.read` to the channel when the public watermark moves (or, if
    /// hidden, when the own one passes it, for read-privacy to withhold) and
    /// `notification.mark_read` to the reader's devices when the own one moves.
    private mutating func readForward(_ ci: Int, _ slot: Int32, _ user: UInt32, to position: Int32, time: Int64, seq: UInt64)
        -> [ReducerOutput]
    {
        let (channelEvent, ownMoved) = moveRead(ci, slot, user, to: position, time: time, seq: seq)
        var outputs: [ReducerOutput] = []
        outputs.reserveCapacity(2)  // one allocation, not one per append
        if let channelEvent { outputs.append(channelEvent) }
        if ownMoved { outputs.append(markReadEvent(ci, slot, user)) }
        return outputs
    }

    /// Moves the read watermarks forward to `position` (see ``readForward``):
    /// the `message.read` to emit to the channel, if any, and whether the own
    /// read watermark moved.
    private mutating func moveRead(_ ci: Int, _ slot: Int32, _ user: UInt32, to position: Int32, time: Int64, seq: UInt64)
        -> (channelEvent: ReducerOutput?, ownMoved: Bool)
    {
        var own = channels[ci].ownWatermarks(slot)
        let record = channels[ci].members[Int(slot)]
        let ownMoved = position > own.readPosition
        guard ownMoved || position > record.readPosition else { return (nil, false) }
        if ownMoved {
            own.readPosition = position
            own.readTime = time
            own.deliveredPosition = max(own.deliveredPosition, position)
        }
        var channelEvent: ReducerOutput?
        if position > record.readPosition {
            if shows(.readOff, ci, user) {
                channels[ci].setRead(slot: slot, to: position, time: time, flags: userFlags[Int(user)])
                // A shown read says the message was delivered too, unless delivery receipts are hidden.
                if position > record.deliveredPosition && shows(.deliveryOff, ci, user) {
                    channels[ci].setDelivered(slot: slot, to: position, time: time, flags: userFlags[Int(user)])
                }
                channelEvent = readEvent(ci, slot)
            } else if ownMoved {
                // Hidden (rule 19): the public watermarks stay, and nobody is told but the audit.
                channelEvent = suppressedEvent(seq: seq, ci, user, .messageRead)
            }
        }
        channels[ci].setOwn(own, slot: slot)
        return (channelEvent, ownMoved)
    }

    /// Whether `user`'s receipts of the kind `flag` hides are shown in channel
    /// `ci` now: their own setting and the channel type's toggle (rule 19).
    func shows(_ flag: PrivacyFlags, _ ci: Int, _ user: UInt32) -> Bool {
        guard !userFlags[Int(user)].contains(flag) else { return false }
        // Most deployments toggle no channel type: no hashing on their acks.
        guard !typeFlags.isEmpty else { return true }
        return !(typeFlags[channels[ci].typeName]?.contains(flag) ?? false)
    }

    /// `notification.mark_all_read`: every channel the user is a member of read to its latest
    /// message. A `message.read` to each channel whose read watermark moved, by cid, then one
    /// `notification.mark_all_read` to the user with their totals (always, so every device clears
    /// its badges; zeros for a user the reducer does not know).
    mutating func markAllRead(_ input: ReducerInput, userID: String, at: String?) -> [ReducerOutput] {
        let time = timeCode(at, input)
        var outputs: [ReducerOutput] = []
        var totals = UnreadTotals()
        if let user = userIndex[userID] {
            let order = userChannels[Int(user)].sorted { channels[Int($0)].cid < channels[Int($1)].cid }
            for ci in order.map({ Int($0) }) {
                // userChannels lists only channels where the user has a current slot.
                let slot = channels[ci].slot(of: user)!
                guard !isBanned(user, ci) else { continue }
                if let channelEvent = moveRead(ci, slot, user, to: channels[ci].latest, time: time, seq: input.seq).channelEvent {
                    outputs.append(channelEvent)
                }
            }
            totals = self.totals(user)
        }
        outputs.append(markAllReadEvent(userID, time: time, totals))
        return outputs
    }

    mutating func markUnread(_ input: ReducerInput, cid: String, userID: String, messageID: String)
        -> [ReducerOutput]
    {
        let target: (ci: Int, slot: Int32, user: UInt32, position: Int32)
        switch resolve(cid, userID, messageID) {
        case .failure(let reason): return [reject(input, cid: cid, userID: userID, messageID: messageID, reason)]
        case .success(let found): target = found
        }
        guard channels[target.ci].sender(at: target.position) != target.user else {
            return [reject(input, cid: cid, userID: userID, messageID: messageID, .ownMessage)]
        }
        if let t = channels[target.ci].thread(ofReply: target.position) {
            return threadMarkUnread(target.ci, t, target.user, from: target.position, time: timeCode(nil, input))
        }
        // Private (rule 6): only the own read watermark moves back; the public one never does.
        let newPosition = channels[target.ci].channelMessage(before: target.position)
        var own = channels[target.ci].ownWatermarks(target.slot)
        guard newPosition < own.readPosition else { return [] }
        own.readPosition = newPosition
        own.readTime = timeCode(nil, input)
        channels[target.ci].setOwn(own, slot: target.slot)
        return [markUnreadEvent(target.ci, target.slot, target.user, firstUnread: target.position)]
    }
}

extension ReceiptReducer {
    // MARK: Settings

    /// `user.updated`: the user's privacy flags; their channels move them in or
    /// out of the hidden members' structures, O(channels × h). Emits nothing.
    mutating func userUpdated(userID: String, read: Bool?, delivery: Bool?) -> [ReducerOutput] {
        let user = intern(userID)
        let old = userFlags[Int(user)]
        let new = old.updated(read: read, delivery: delivery)
        guard old != new else { return [] }
        userFlags[Int(user)] = new
        for ci in userChannels[Int(user)] {
            // userChannels lists only channels where the user has a current slot.
            let slot = channels[Int(ci)].slot(of: user)!
            channels[Int(ci)].changeFlags(slot: slot, from: old, to: new)
        }
        return []
    }

    /// `channel_type.updated`: the type's toggles. Emits nothing.
    mutating func channelTypeUpdated(name: String, read: Bool?, delivery: Bool?) -> [ReducerOutput] {
        let new = (typeFlags[name] ?? []).updated(read: read, delivery: delivery)
        typeFlags[name] = new.isEmpty ? nil : new
        return []
    }
}
