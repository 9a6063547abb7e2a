import EventBusCore

/// A channel's and a user's life (docs/events.md rules 20–23): truncation,
/// hiding, deletion of channels and users, bans.
extension ReceiptReducer {
    // MARK: Channels

    /// `channel.truncated`: the history through `messageID` (all of it when
    /// `nil`) is gone for everyone, with the threads whose parents it takes.
    /// Each member whose badge changed is told (`notification.channel_truncated`).
    mutating func channelTruncated(_ input: ReducerInput, cid: String, messageID: String?) -> [ReducerOutput] {
        guard let ci = channelIndex[cid].map({ Int($0) }) else {
            return [reject(input, cid: cid, userID: nil, messageID: messageID, .unknownChannel)]
        }
        let through: Int32
        if let messageID {
            guard let position = channels[ci].messageIndex.position(of: messageID, in: channels[ci].messageIDs) else {
                return [reject(input, cid: cid, userID: nil, messageID: messageID, .unknownMessage)]
            }
            through = position
        } else {
            through = Int32(channels[ci].messageIDs.count) - 1
        }
        let taken = channels[ci].truncation(through: through)
        // What the channel forgot comes before any message it keeps: a truncation takes it too.
        guard !taken.isEmpty || channels[ci].forgottenLive else { return [] }
        let before = badges(ci)
        channels[ci].truncate(taken)
        channels[ci].floors = [:]
        channels[ci].forgottenLive = false
        return notifyChanged(.channelTruncated, ci, before: before)
    }

    /// `channel.hidden`: the member sees nothing of the channel as unread until
    /// they show it again or a new channel message comes; with `clear_history`
    /// everything so far becomes read for them, privately (their own read
    /// watermark, rule 6: nobody sees a read). Tells their devices.
    mutating func channelHidden(_ input: ReducerInput, cid: String, userID: String, clearHistory: Bool) -> [ReducerOutput] {
        let target: (ci: Int, slot: Int32, user: UInt32, position: Int32)
        switch resolve(cid, userID, nil, acking: false) {
        case .failure(let reason): return [reject(input, cid: cid, userID: userID, messageID: nil, reason)]
        case .success(let found): target = found
        }
        var changed = channels[target.ci].setHidden(true, slot: target.slot)
        if clearHistory {
            var own = channels[target.ci].ownWatermarks(target.slot)
            let latest = channels[target.ci].latest
            if latest > own.readPosition {
                own.readPosition = latest
                own.readTime = timeCode(nil, input)
                channels[target.ci].setOwn(own, slot: target.slot)
                changed = true
            }
        }
        guard changed else { return [] }
        return [countsEvent(.channelHidden, cid: cid, user: target.user, ci: target.ci, slot: target.slot)]
    }

    /// `channel.visible`: the member shows the channel again. Tells their devices.
    mutating func channelVisible(_ input: ReducerInput, cid: String, userID: String) -> [ReducerOutput] {
        switch resolve(cid, userID, nil, acking: false) {
        case .failure(let reason):
            return [reject(input, cid: cid, userID: userID, messageID: nil, reason)]
        case .success(let target):
            guard channels[target.ci].setHidden(false, slot: target.slot) else { return [] }
            return [countsEvent(.channelVisible, cid: cid, user: target.user, ci: target.ci, slot: target.slot)]
        }
    }

    /// `channel.deleted`: the channel and everything about it goes (its slot in
    /// ``channels`` stays, empty, so no other index moves); its cid may be
    /// created again, afresh. Each member's devices get their new totals.
    mutating func channelDeleted(_ input: ReducerInput, cid: String) -> [ReducerOutput] {
        guard let ci = channelIndex[cid].map({ Int($0) }) else {
            return [reject(input, cid: cid, userID: nil, messageID: nil, .unknownChannel)]
        }
        let members = channels[ci].members.filter(\.isMember).map(\.user).sorted { users[Int($0)] < users[Int($1)] }
        for user in members {
            if let i = userChannels[Int(user)].firstIndex(of: Int32(ci)) { userChannels[Int(user)].remove(at: i) }
        }
        channelIndex[cid] = nil
        channels[ci] = ChannelState(cid: "")
        return members.map { countsEvent(.channelDeleted, cid: cid, user: $0, ci: ci, slot: nil) }
    }

    // MARK: Users

    /// `user.deleted`: the user leaves every channel (their records stay, as a
    /// removed member's, and resume if they are added again). With `hard`
    /// their records are erased, in the channels they had left too (added
    /// again, they start as new members; thread watermarks stay), and
    /// their messages are deleted everywhere: each member for whom one was
    /// unread gets their new counts, one `notification.user_deleted` per channel.
    mutating func userDeleted(_ input: ReducerInput, userID: String, hard: Bool) -> [ReducerOutput] {
        guard let user = userIndex[userID] else { return [] }
        var outputs: [ReducerOutput] = []
        if hard {
            for ci in channels.indices where !(channels[ci].ownCountable[user] ?? []).isEmpty {
                let before = badges(ci).filter { $0.user != user }
                for position in channels[ci].ownCountable[user] ?? [] {
                    _ = channels[ci].deleteMessage(at: position)
                }
                outputs += notifyChanged(.userDeleted, ci, before: before) { writer in
                    writer.key(plain: "deleted_user_id"); writer.string(userID)
                }
            }
        }
        for ci in userChannels[Int(user)] {
            let removed = channels[Int(ci)].removeMember(user, users, flags: userFlags[Int(user)])
            assert(removed, "userChannels lists only channels where the user is a member")
        }
        userChannels[Int(user)] = []
        if hard {
            // Every record, the channels they had left too: O(channels), for a rare event.
            for ci in channels.indices {
                guard let slot = channels[ci].slot(of: user), !channels[ci].members[Int(slot)].erased else { continue }
                channels[ci].erase(slot: slot)
            }
        }
        return outputs
    }

    /// `user.banned` / `user.unbanned`: the user may not acknowledge in `cid`
    /// (a channel ban), or in any channel (`nil`); their acks are rejected
    /// `banned`. Emits nothing else: their counts do not change.
    mutating func userBanned(_ input: ReducerInput, userID: String, cid: String?, banned: Bool) -> [ReducerOutput] {
        let user = intern(userID)
        guard let cid else {
            if banned { bannedEverywhere.insert(user) } else { bannedEverywhere.remove(user) }
            return []
        }
        guard let ci = channelIndex[cid].map({ Int($0) }) else {
            return [reject(input, cid: cid, userID: userID, messageID: nil, .unknownChannel)]
        }
        if banned { channels[ci].banned.insert(user) } else { channels[ci].banned.remove(user) }
        return []
    }

    /// Whether `user` may not acknowledge in channel `ci`.
    func isBanned(_ user: UInt32, _ ci: Int) -> Bool {
        (!bannedEverywhere.isEmpty && bannedEverywhere.contains(user))
            || (!channels[ci].banned.isEmpty && channels[ci].banned.contains(user))
    }
}
