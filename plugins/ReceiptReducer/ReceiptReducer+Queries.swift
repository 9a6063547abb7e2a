import EventBusCore

/// The `receipts` service's methods (docs/events.md "Queries"). The full reply hides
/// nothing: every field is present and `hidden_member_count` is 0. Next to it
/// the reducer computes the redacted views for the query's viewer (see
/// ``QueryAnswer``), from structure: per channel, the sorted read and
/// delivered positions of the members with receipts off give the counts to
/// take out in O(log h), and reader pages skip the h hidden members. Both
/// `channel_state` and `message_receipts` are paged: every view is computed
/// for the same page (same members, same `next_cursor`) as the full reply.
extension ReceiptReducer {
    /// Answers a query; returns the reply's full result object as JSON bytes.
    ///
    /// - Parameters:
    ///   - method: `channel_state`, `unread_counts` or `message_receipts`.
    ///   - params: the params object.
    /// - Throws: `bad_request` for an unknown method or a bad param (the message
    ///   names it, `params.cid: required`), `not_found` for an unknown channel or message.
    public func query(method: String, params: JSONValue) throws(QueryError) -> [UInt8] {
        try answer(method: method, params: params).result
    }

    /// Answers a query with the full result and, for `channel_state` and
    /// `message_receipts`, the redacted views for the viewer (``QueryAnswer``).
    ///
    /// - Parameters:
    ///   - method: `channel_state`, `unread_counts` or `message_receipts`.
    ///   - params: the params object.
    /// - Throws: as ``query(method:params:)``.
    public func answer(method: String, params: JSONValue) throws(QueryError) -> QueryAnswer {
        guard case .object = params else { throw .badRequest("params: must be an object") }
        switch method {
        case "channel_state":
            let ci = try channel(params)
            let viewer = try Self.required(params, "viewer", Identifier.isValidUserID, Self.userRule)
            let page = try Self.statePage(params)
            return withViews(ci, viewer) { visibility in channelState(ci, page, visibility) }
        case "unread_counts":
            return QueryAnswer(result: try unreadCounts(params), views: nil)
        case "message_receipts":
            let request = try receiptsRequest(params)
            if let t = channels[request.ci].thread(ofReply: request.position) {
                return withViews(request.ci, request.viewer) { visibility in threadReceipts(request, t, visibility) }
            }
            return withViews(request.ci, request.viewer) { visibility in messageReceipts(request, visibility) }
        case "thread_state":
            let ci = try channel(params)
            let parentID = try Self.required(params, "parent_id", Identifier.isValidMessageID, Self.idRule)
            let viewer = try Self.required(params, "viewer", Identifier.isValidUserID, Self.userRule)
            let channel = channels[ci]
            guard let parent = channel.messageIndex.position(of: parentID, in: channel.messageIDs),
                let t = channel.thread(ofParent: parent)
            else { throw .notFound("params.parent_id: no thread of \(parentID) in \(channel.cid)") }
            return withViews(ci, viewer) { visibility in threadState(ci, t, visibility) }
        default:
            throw .badRequest(
                "method: unknown method \"\(method)\"; expected channel_state, unread_counts, message_receipts or thread_state")
        }
    }

    /// The full reply plus every view that hides someone.
    private func withViews(_ ci: Int, _ viewerID: String, _ compute: (Visibility) -> (bytes: [UInt8], hidden: Int))
        -> QueryAnswer
    {
        let channel = channels[ci]
        let viewer = userIndex[viewerID]
        let type = typeFlags[channel.typeName] ?? []
        let viewerFlags = viewer.map { userFlags[Int($0)] } ?? []
        let read: Visibility.Mode = type.contains(.readOff) ? .all : .bySetting
        let delivery: Visibility.Mode = type.contains(.deliveryOff) ? .all : .bySetting
        var keys: [(String, Visibility.Mode, Visibility.Mode)] = [
            ("read", read, .shown), ("delivery", .shown, delivery), ("read+delivery", read, delivery),
        ]
        let reciprocal = channel.memberCount == 2 && viewerFlags.contains(.readOff)
        if reciprocal {
            keys += [("read+reciprocity", .all, .shown), ("read+delivery+reciprocity", .all, delivery)]
        }
        var answer = QueryAnswer(result: compute(Visibility(viewer: viewer)).bytes, views: [])
        for (key, readMode, deliveryMode) in keys {
            let visibility = Visibility(read: readMode, delivery: deliveryMode, viewer: viewer)
            guard hiddenMembers(channel, visibility, sender: nil).any > 0 else { continue }
            let view = compute(visibility)
            if view.hidden > 0 { answer.views?.append((key, view.bytes)) }
        }
        answer.viewerReadReceipts = !viewerFlags.contains(.readOff)
        answer.memberCount = channel.memberCount
        return answer
    }

    /// The hidden members of a view among the current members other than the
    /// viewer and `sender`: how many are read-hidden, how many of those have
    /// read `position` or later, the same for delivery, and how many have
    /// anything hidden. For a message (`sender` given), only the members who
    /// joined before it count (rule 8). O(log h).
    func hiddenMembers(_ channel: ChannelState, _ visibility: Visibility, sender: UInt32?, position: Int32 = 0)
        -> (read: Int, readFrom: Int, delivery: Int, deliveredFrom: Int, any: Int)
    {
        // A view that shows everything hides nobody (every receipt event's full counts): no
        // look at the members, no allocation.
        if visibility.read == .shown && visibility.delivery == .shown { return (0, 0, 0, 0, 0) }
        // Members who joined at or after the message count for it in nothing.
        let since: Int32? = sender == nil ? nil : position
        func late(_ joins: [Int32]) -> Int {
            since.map { joins.count - ChannelState.lowerBound(joins, $0) } ?? 0
        }
        // The counted members left out of the view's hiding: the viewer and the sender.
        var excluded: [MemberState] = []
        for user in [sender, visibility.viewer] {
            guard let user, !excluded.contains(where: { $0.user == user }), let slot = channel.currentSlot(of: user),
                since.map({ channel.counts(slot: slot, for: $0) }) ?? true
            else { continue }
            excluded.append(channel.members[Int(slot)])
        }
        let lateJoiners = since.map { channel.joined(from: $0) } ?? 0
        let everyone = channel.memberCount - lateJoiners - excluded.count

        func aspect(_ mode: Visibility.Mode, _ flag: PrivacyFlags, _ sorted: [Int32], _ tree: Fenwick,
                    _ watermark: (MemberState) -> Int32) -> (Int, Int) {
            switch mode {
            case .shown:
                return (0, 0)
            case .all:
                // Late joiners are past the message: all among those from it.
                var from = channel.memberCount - tree.prefix(Int(position) + 1) - lateJoiners
                for record in excluded where watermark(record) >= position { from -= 1 }
                return (everyone, from)
            case .bySetting:
                let hiddenLate = late(flag == .readOff ? channel.hiddenReadJoins : channel.hiddenDeliveryJoins)
                var size = sorted.count - hiddenLate
                var from = sorted.count - ChannelState.lowerBound(sorted, position) - hiddenLate
                for record in excluded where userFlags[Int(record.user)].contains(flag) {
                    size -= 1
                    if watermark(record) >= position { from -= 1 }
                }
                return (size, from)
            }
        }
        let read = aspect(visibility.read, .readOff, channel.hiddenReads, channel.reads) { $0.readPosition }
        let delivery = aspect(visibility.delivery, .deliveryOff, channel.hiddenDeliveries, channel.delivered) {
            $0.deliveredPosition
        }
        let any: Int
        switch (visibility.read, visibility.delivery) {
        case (.all, _), (_, .all): any = everyone
        case (.bySetting, .bySetting):
            any = channel.hiddenMembers - late(channel.hiddenJoins) - excluded.filter { !userFlags[Int($0.user)].isEmpty }.count
        case (.bySetting, .shown): any = read.0
        case (.shown, .bySetting): any = delivery.0
        case (.shown, .shown): any = 0
        }
        return (read.0, read.1, delivery.0, delivery.1, any)
    }

    // MARK: Params

    static func string(
        _ params: JSONValue, _ name: String, _ isValid: (String) -> Bool, _ rule: String
    ) throws(QueryError) -> String? {
        guard let value = params[name], value != .null else { return nil }
        guard case .string(let text) = value else { throw .badRequest("params.\(name): must be a string") }
        guard isValid(text) else { throw .badRequest("params.\(name): \(rule)") }
        return text
    }

    static func required(
        _ params: JSONValue, _ name: String, _ isValid: (String) -> Bool, _ rule: String
    ) throws(QueryError) -> String {
        guard let text = try string(params, name, isValid, rule) else { throw .badRequest("params.\(name): required") }
        return text
    }

    private static let cidRule = "must be TYPE:ID, TYPE [a-z0-9_-]{1,64}, ID [A-Za-z0-9_!.@-]{1,128}"
    static let idRule = "must match [A-Za-z0-9_!.@-]{1,128}"
    static let userRule = "must match [A-Za-z0-9_!.@-]{1,128} and not start with @"

    func channel(_ params: JSONValue) throws(QueryError) -> Int {
        let cid = try Self.required(params, "cid", Identifier.isValidCID, Self.cidRule)
        guard let ci = channelIndex[cid] else { throw .notFound("params.cid: no channel \(cid)") }
        return Int(ci)
    }

    // MARK: Methods

    /// A validated `channel_state` page request.
    struct StatePage {
        /// Members per page, 1–1000.
        var pageSize: Int
        /// The cursor: the page starts after this user id; `nil` for the first page.
        var after: MemberCursor?
    }

    private static func statePage(_ params: JSONValue) throws(QueryError) -> StatePage {
        var pageSize = MemberCursor.maxPageSize
        if let value = params["page_size"], value != .null {
            guard let size = value.int64Value, (1...Int64(MemberCursor.maxPageSize)).contains(size) else {
                throw .badRequest("params.page_size: must be an integer from 1 to \(MemberCursor.maxPageSize)")
            }
            pageSize = Int(size)
        }
        var after: MemberCursor?
        if let text = try string(params, "cursor", { _ in true }, "") {
            guard let cursor = MemberCursor(text) else {
                throw .badRequest("params.cursor: not a cursor this service returned")
            }
            after = cursor
        }
        return StatePage(pageSize: pageSize, after: after)
    }

    /// `channel_state {cid, viewer, page_size?, cursor?}`: one page of the
    /// current members, sorted by user id, with the fields the view hides left
    /// out, and `next_cursor` (null after the last member).
    ///
    /// The page starts after the cursor's user id, found by binary search in
    /// the channel's ``MemberOrder``: O(log n + page × log m) for n members and
    /// m messages (each member's `unread_messages` is O(log m)), whatever the
    /// page's place. `hidden_member_count` is over the whole channel (O(1)
    /// from the hidden members' counts), not just this page: it is the same on
    /// every page, and a view is offered whenever it hides anybody.
    private func channelState(_ ci: Int, _ page: StatePage, _ visibility: Visibility) -> (bytes: [UInt8], hidden: Int) {
        let channel = channels[ci]
        let order = channel.memberOrder
        var index = page.after.map { order.bound($0.userID, strict: true, users) } ?? order.startIndex
        let hidden = hiddenMembers(channel, visibility, sender: nil).any
        var writer = JSONWriter(capacity: 128 + min(page.pageSize, order.count) * 192)
        writer.beginObject()
        writer.key("cid"); writer.string(channel.cid)
        writer.key("members")
        writer.beginArray()
        var written = 0
        var last: UInt32?
        while written < page.pageSize, let user = order.member(at: index) {
            // The order holds current members only, and every current member has a slot.
            let record = channel.members[Int(channel.slot(of: user)!)]
            writeMember(&writer, channel, record, visibility)
            written += 1
            last = user
            index = order.index(after: index)
        }
        writer.endArray()
        writer.key("hidden_member_count"); writer.int(hidden)
        writer.key("next_cursor")
        if let last, order.member(at: index) != nil {
            writer.string(MemberCursor(userID: users[Int(last)]).text)
        } else {
            writer.null()
        }
        writer.endObject()
        return (writer.takeBytes(), hidden)
    }

    /// One `channel_state` member entry, without the fields `visibility` hides.
    private func writeMember(
        _ writer: inout JSONWriter, _ channel: ChannelState, _ record: MemberState, _ visibility: Visibility
    ) {
        writer.beginObject()
        writer.key("user_id"); writer.string(users[Int(record.user)])
        if !visibility.hidesRead(record.user, userFlags) {
            // The viewer sees their own read watermark (rule 18), everyone else the public ones.
            var read = (position: record.readPosition, time: record.readTime)
            let viewer = record.user == visibility.viewer
            let slot = channel.slot(of: record.user)!
            if viewer {
                let own = channel.ownWatermarks(slot)
                read = (own.readPosition, own.readTime)
            }
            writer.key("last_read"); times.write(read.time, to: &writer)
            writer.key("last_read_message_id"); writer.string(orNull: channel.messageID(at: read.position))
            writer.key("unread_messages"); writer.int(channel.unreadMessages(slot, own: viewer))
        }
        if !visibility.hidesDelivery(record.user, userFlags) {
            writer.key("last_delivered_at"); times.write(record.deliveredTime, to: &writer)
            writer.key("last_delivered_message_id")
            writer.string(orNull: channel.messageID(at: record.deliveredPosition))
        }
        writer.endObject()
    }

    /// `unread_counts {user_id}`: totals over the user's channels and the channels with unread, by cid.
    /// An unknown user has no unread (zeros, no channels).
    private func unreadCounts(_ params: JSONValue) throws(QueryError) -> [UInt8] {
        let userID = try Self.required(params, "user_id", Identifier.isValidUserID, Self.userRule)
        var rows: [(cid: String, unread: Int, mentions: Int, muted: Bool, countUnread: String, lastRead: String?, first: String?,
                    threads: [String]?)] = []
        var totals = UnreadTotals()
        // Thread fields only for a user who takes part in a thread of one of their channels.
        var threadTotal: Int?
        if let user = userIndex[userID] {
            totals = self.totals(user)
            for ci in userChannels[Int(user)] {
                let channel = channels[Int(ci)]
                // userChannels lists only channels where the user has a slot.
                let slot = channel.slot(of: user)!
                let record = channel.members[Int(slot)]
                // The user's own read watermark (rule 18): their badge's.
                let own = channel.ownWatermarks(slot)
                let badge = channel.badge(slot)
                let unread = badge.messages
                let takesPart = channel.participation[user] != nil
                let threads = takesPart ? unreadThreads(Int(ci), user) : []
                if takesPart { threadTotal = (threadTotal ?? 0) + threads.count }
                guard unread > 0 || !threads.isEmpty else { continue }
                let first = unread > 0 ? channel.firstUnread(after: own.readPosition, user: user) : nil
                rows.append((
                    channel.cid, unread, badge.mentions,
                    record.muted, record.countUnread.rawValue, times.decode(own.readTime),
                    first.map { channel.messageIDs[Int($0)] },
                    takesPart ? threads.map { channel.messageIDs[Int(channel.threads[$0].parent)] } : nil
                ))
            }
        }
        rows.sort { $0.cid < $1.cid }
        var writer = JSONWriter(capacity: 96 + rows.count * 160)
        writer.beginObject()
        writer.key("total_unread_count"); writer.int(totals.total)
        writer.key("unread_channels"); writer.int(totals.channels)
        writer.key("total_unread_mentions"); writer.int(totals.mentions)
        if let threadTotal { writer.key("unread_threads"); writer.int(threadTotal) }
        writer.key("channels")
        writer.beginArray()
        for row in rows {
            writer.beginObject()
            writer.key("cid"); writer.string(row.cid)
            writer.key("unread_messages"); writer.int(row.unread)
            writer.key("unread_mentions"); writer.int(row.mentions)
            writer.key("muted"); writer.bool(row.muted)
            writer.key("count_unread"); writer.string(row.countUnread)
            writer.key("last_read"); writer.string(orNull: row.lastRead)
            writer.key("first_unread_message_id"); writer.string(orNull: row.first)
            if let threads = row.threads {
                writer.key("unread_threads"); writer.int(threads.count)
                writer.key("unread_thread_parent_ids")
                writer.beginArray()
                for id in threads { writer.string(id) }
                writer.endArray()
            }
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.takeBytes()
    }

    /// A validated `message_receipts` request.
    struct ReceiptsRequest {
        var ci: Int
        var position: Int32
        var viewer: String
        var pageSize: Int
        /// The readers' cursor (no `list`).
        var cursor: ReaderCursor?
        /// The list asked for, if any, and its cursor.
        var list: ReceiptList?
        var after: MemberCursor?
    }

    private func receiptsRequest(_ params: JSONValue) throws(QueryError) -> ReceiptsRequest {
        let ci = try channel(params)
        let messageID = try Self.required(params, "message_id", Identifier.isValidMessageID, Self.idRule)
        let viewer = try Self.required(params, "viewer", Identifier.isValidUserID, Self.userRule)
        var pageSize = 50
        if let value = params["page_size"], value != .null {
            guard let size = value.int64Value, (1...100).contains(size) else {
                throw .badRequest("params.page_size: must be an integer from 1 to 100")
            }
            pageSize = Int(size)
        }
        let listText = try Self.string(params, "list", { ReceiptList(rawValue: $0) != nil },
                                       "must be read, delivered, unread or undelivered")
        let list = listText.flatMap { ReceiptList(rawValue: $0) }
        let cursorText = try Self.string(params, "cursor", { _ in true }, "")
        var cursor: ReaderCursor?
        var after: MemberCursor?
        if let cursorText {
            // A list pages by user id, the readers by recency: each takes only its own cursors.
            if list == nil { cursor = ReaderCursor(cursorText) } else { after = MemberCursor(cursorText) }
            guard cursor != nil || after != nil else {
                throw .badRequest("params.cursor: not a cursor this service returned")
            }
        }
        let channel = channels[ci]
        guard let position = channel.messageIndex.position(of: messageID, in: channel.messageIDs) else {
            throw .notFound("params.message_id: no message \(messageID) in \(channel.cid)")
        }
        return ReceiptsRequest(
            ci: ci, position: position, viewer: viewer, pageSize: pageSize, cursor: cursor, list: list, after: after)
    }

    /// `message_receipts {cid, message_id, viewer, list?, page_size?, cursor?}`:
    /// counts over the current members other than the sender, in O(log n) (a
    /// view takes out its hidden members in O(log h)); readers newest first —
    /// by the time their read watermark last moved (the `last_read` shown),
    /// equal times by the order the reducer applied the moves, later first.
    ///
    /// A page walks the channel's ``ReaderList`` from the newest member (or,
    /// with a cursor, from the newest member older than it, found in O(log n))
    /// towards the oldest, skipping the members who have not read the message,
    /// the sender and the hidden: O(log n + w) for the w members walked. w is
    /// the page plus the members skipped before the page fills (plus, without
    /// a next page, those after its last reader). Without a cursor the walk
    /// stops as soon as every visible reader is written (their number is
    /// known), so a first page of a recent message, whose readers are the
    /// newest, walks little more than its readers; and it stops at a full page
    /// when more readers are known to follow. Worst case O(n): a message few
    /// members have read, whose readers are spread through the order or moved
    /// long ago, or a later page of a message whose last readers are the oldest
    /// movers. Measured at 100,000 members (release build): a page of 50 of a
    /// message half the members read, 12 µs; the first page of a message 100
    /// members read, spread evenly, 85 µs (a walk of half the list); a walk of
    /// the whole list about twice that. Never a sort.
    private func messageReceipts(_ request: ReceiptsRequest, _ visibility: Visibility) -> (bytes: [UInt8], hidden: Int) {
        let channel = channels[request.ci]
        let position = request.position
        let pageSize = request.pageSize
        let sender = channel.sender(at: position)
        let tally = channelTally(channel, position, visibility)
        let (others, hidden) = (tally.others, tally.hidden)
        let (visibleReadCount, visibleDeliveredCount) = (tally.read, tally.delivered)

        var writer = JSONWriter(capacity: 160 + pageSize * 64)
        writer.beginObject()
        writer.key("read_count"); writer.int(visibleReadCount)
        writer.key("delivered_count"); writer.int(visibleDeliveredCount)
        writer.key("unread_member_count"); writer.int(others - hidden.read - visibleReadCount)
        writer.key("undelivered_member_count"); writer.int(others - hidden.delivery - visibleDeliveredCount)
        writer.key("hidden_member_count"); writer.int(hidden.any)
        if let list = request.list {
            let total =
                switch list {
                case .read: visibleReadCount
                case .unread: others - hidden.read - visibleReadCount
                case .delivered: visibleDeliveredCount
                case .undelivered: others - hidden.delivery - visibleDeliveredCount
                }
            writeList(&writer, request, list, sender: sender, total: total, visibility)
            writer.endObject()
            return (writer.takeBytes(), hidden.any)
        }
        writer.key("readers")
        writer.beginArray()
        var nextCursor: String?
        if visibility.read == .all {
            // Only the viewer's own read shows: one reader at most, no next page.
            if let viewer = visibility.viewer, viewer != sender, let slot = channel.currentSlot(of: viewer),
                channel.counts(slot: slot, for: position)
            {
                let record = channel.members[Int(slot)]
                let afterCursor = request.cursor.map {
                    ReaderList.older((record.readTime, record.readStamp), $0.key)
                } ?? true
                if record.readPosition >= position && afterCursor {
                    writeReader(&writer, channel, record, at: position)
                }
            }
        } else {
            let readers = channel.readers
            var index =
                if let cursor = request.cursor {
                    readers.newest(olderThan: cursor.key, channel.members)
                } else {
                    readers.newest
                }
            // Without a cursor every visible reader is ahead, and their number is known.
            let total: Int? = request.cursor == nil ? visibleReadCount : nil
            var written = 0
            var last: MemberState?
            while let at = index, written < total ?? .max {
                let record = channel.members[Int(readers.slot(at: at))]
                if record.readPosition >= position && record.joinedAt < position && record.user != sender
                    && !visibility.hidesRead(record.user, userFlags)
                {
                    if written == pageSize {
                        // A page is full and another visible reader follows: the cursor is the last written one.
                        nextCursor = last.map { ReaderCursor(time: $0.readTime, stamp: $0.readStamp).text }
                        break
                    }
                    writeReader(&writer, channel, record, at: position)
                    written += 1
                    last = record
                    if written == pageSize, let total, total > pageSize {
                        // More readers follow: no need to walk on to the next one.
                        nextCursor = ReaderCursor(time: record.readTime, stamp: record.readStamp).text
                        break
                    }
                }
                index = readers.index(before: at)
            }
        }
        writer.endArray()
        writer.key("next_cursor"); writer.string(orNull: nextCursor)
        writer.endObject()
        return (writer.takeBytes(), hidden.any)
    }

    /// A `message_receipts` list: `members`, one page of the visible members
    /// in `list` sorted by user id, from after the cursor's user id, then
    /// `next_cursor` (`u:<user_id>` of the last one written, `null` after the
    /// last page). `total` is how many the list holds for this view.
    ///
    /// The page walks the channel's ``MemberOrder`` from the cursor (a binary
    /// search, O(log n)), passing over the members not in the list: O(log n +
    /// w) for the w members walked, each checked in O(1) (O(1) more for the
    /// time its watermark passed the message). Without a cursor the walk stops
    /// once `total` are written. A view that hides the aspect from everyone but
    /// the viewer looks at the viewer alone.
    func writeList(
        _ writer: inout JSONWriter, _ request: ReceiptsRequest, _ list: ReceiptList, sender: UInt32, total: Int,
        _ visibility: Visibility
    ) {
        let channel = channels[request.ci]
        let position = request.position
        func hides(_ user: UInt32) -> Bool {
            list.isRead ? visibility.hidesRead(user, userFlags) : visibility.hidesDelivery(user, userFlags)
        }
        func listed(_ slot: Int32) -> Bool {
            let record = channel.members[Int(slot)]
            let watermark = list.isRead ? record.readPosition : record.deliveredPosition
            return record.user != sender && record.joinedAt < position && (watermark >= position) == list.passed
                && !hides(record.user)
        }
        func write(_ slot: Int32) {
            let record = channel.members[Int(slot)]
            writer.beginObject()
            writer.key("user_id"); writer.string(users[Int(record.user)])
            if let key = list.timeKey {
                writer.key(key)
                times.write(channel.passed(position, slot: slot, read: list.isRead) ?? TimeTable.none, to: &writer)
            }
            writer.endObject()
        }
        writer.key("members")
        writer.beginArray()
        var nextCursor: String?
        if (list.isRead ? visibility.read : visibility.delivery) == .all {
            // Only the viewer's own entry shows: one at most, no next page.
            if let viewer = visibility.viewer, let slot = channel.currentSlot(of: viewer), listed(slot),
                request.after.map({ users[Int(viewer)] > $0.userID }) ?? true
            {
                write(slot)
            }
        } else {
            let order = channel.memberOrder
            var index = request.after.map { order.bound($0.userID, strict: true, users) } ?? order.startIndex
            // Without a cursor every visible member of the list is ahead, and their number is known.
            let known: Int? = request.after == nil ? total : nil
            var written = 0
            var last: UInt32?
            while written < known ?? .max, let user = order.member(at: index) {
                // The order holds current members only, and every current member has a slot.
                let slot = channel.slot(of: user)!
                if listed(slot) {
                    if written == request.pageSize {
                        nextCursor = last.map { MemberCursor(userID: users[Int($0)]).text }
                        break
                    }
                    write(slot)
                    written += 1
                    last = user
                    if written == request.pageSize, let known, known > written {
                        nextCursor = MemberCursor(userID: users[Int(user)]).text
                        break
                    }
                }
                index = order.index(after: index)
            }
        }
        writer.endArray()
        writer.key("next_cursor"); writer.string(orNull: nextCursor)
    }

    /// One reader of the message at `position`: `last_read` (when their public read
    /// watermark last moved: the readers' order) and `read_at` (when it passed this
    /// message, rule 13, as in the lists).
    func writeReader(_ writer: inout JSONWriter, _ channel: ChannelState, _ record: MemberState, at position: Int32) {
        writer.beginObject()
        writer.key("user_id"); writer.string(users[Int(record.user)])
        writer.key("last_read"); times.write(record.readTime, to: &writer)
        writer.key("read_at")
        // A reader has a slot, and their watermark passed the message (they are listed as its reader).
        let passed = channel.slot(of: record.user).flatMap { channel.passed(position, slot: $0, read: true) }
        times.write(passed ?? TimeTable.none, to: &writer)
        writer.endObject()
    }
}

/// Which members' read and delivery fields a view hides from its viewer.
struct Visibility: Sendable {
    /// How a view treats one kind of receipt.
    enum Mode: Sendable, Equatable {
        /// Nobody's is hidden (the full reply).
        case shown
        /// Hidden for the members whose own setting is off.
        case bySetting
        /// Hidden for everyone (a channel type toggle, or reciprocity).
        case all
    }

    var read: Mode = .shown
    var delivery: Mode = .shown
    /// The interned viewer, who always sees their own fields; `nil` if unknown.
    var viewer: UInt32?

    func hidesRead(_ user: UInt32, _ flags: [PrivacyFlags]) -> Bool {
        hides(read, .readOff, user, flags)
    }

    func hidesDelivery(_ user: UInt32, _ flags: [PrivacyFlags]) -> Bool {
        hides(delivery, .deliveryOff, user, flags)
    }

    private func hides(_ mode: Mode, _ flag: PrivacyFlags, _ user: UInt32, _ flags: [PrivacyFlags]) -> Bool {
        guard user != viewer else { return false }
        switch mode {
        case .shown: return false
        case .all: return true
        case .bySetting: return flags[Int(user)].contains(flag)
        }
    }
}

/// A place in the readers' order: the key (read time, read stamp) of the
/// last reader of a page; the next page starts at the newest member older
/// than it. Stamps are never reused and never decrease, so the place holds
/// whatever happens meanwhile: a member whose read watermark does not move
/// keeps their place on one side of it. A reader who moves takes a new key,
/// the newest unless the move is dated before the cursor's time: if already
/// returned they are not repeated, if not yet they are not on a later page.
struct ReaderCursor: Sendable, Equatable {
    /// The last reader's read time (a ``TimeTable`` code).
    var time: Int64
    /// Their read stamp.
    var stamp: Int64

    init(time: Int64, stamp: Int64) {
        self.time = time
        self.stamp = stamp
    }

    /// Parses `r<time>.<stamp>` (decimal; the time may be negative).
    init?(_ text: String) {
        guard text.first == "r", let dot = text.firstIndex(of: "."),
            let time = Int64(text[text.index(after: text.startIndex)..<dot]),
            let stamp = Int64(text[text.index(after: dot)...]), stamp >= 0
        else { return nil }
        self.time = time
        self.stamp = stamp
    }

    /// The key in ``ReaderList`` order.
    var key: ReaderList.Key { (time, stamp) }

    /// The opaque text handed to clients.
    var text: String { "r\(time).\(stamp)" }
}

/// A place in a channel's members by user id: the last member of a
/// `channel_state` page. Stable under concurrent changes — the next page
/// starts at the first current member whose user id sorts after it, so a
/// member joining or leaving elsewhere never shifts a page: nobody present
/// throughout is skipped or repeated.
struct MemberCursor: Sendable, Equatable {
    /// The largest and default `channel_state` page size.
    static let maxPageSize = 1000

    /// The user id of the last member returned.
    var userID: String

    init(userID: String) {
        self.userID = userID
    }

    /// Parses `u:<user_id>`.
    init?(_ text: String) {
        guard text.hasPrefix("u:") else { return nil }
        let userID = String(text.dropFirst(2))
        guard Identifier.isValidUserID(userID) else { return nil }
        self.userID = userID
    }

    /// The opaque text handed to clients.
    var text: String { "u:\(userID)" }
}
