extension EventValidator {
    /// Checks an event frame for stage `in`, the checks of
    /// ``validate(_:stage:)-(UnsafeRawBufferPointer,_)`` there, and returns its envelope.
    ///
    /// The same answer as `validate(frame, stage: "in")`: for an accepted event the attributes of its
    /// envelope, with ``EnvelopeFields/dataRange`` set to where `data` lies in `frame` (as
    /// ``scanEnvelope(_:)-(UnsafeRawBufferPointer)`` sets it); for a refused one the very same error, code
    /// and message. The typed ``IngressPayload`` is not built.
    ///
    /// Several times faster for the common events: `message.new`, `message.read`, `message.delivered`,
    /// `message.deleted`, `notification.mark_read`, `notification.mark_unread`, `member.added` and
    /// `member.removed` are checked by scans of the envelope and of `data` that build no ``JSONValue`` and
    /// no string of `data`. Whatever those scans cannot vouch for — another type, an escape in a field the
    /// rules read, or any refusal — goes through the full path, which decides and words the error.
    ///
    /// - Parameter frame: the event's bytes, as received.
    /// - Returns: the envelope's attributes and where `data` lies in `frame`.
    /// - Throws: ``EventValidationError`` with `.badJSON`, `.badEvent` or `.unknownType`.
    package static func checkIngress(_ frame: UnsafeRawBufferPointer) throws(EventValidationError) -> EnvelopeFields {
        let scanned = try? scanEnvelope(frame)
        if let scanned, isValidIngress(frame, scanned) {
            return scanned
        }
        // Rare: a type the scans leave to the parser, or a refusal to word.
        var fields = EnvelopeFields(try validate(parsing: frame, stage: Stage.in).envelope)
        fields.dataRange = scanned?.dataRange
        return fields
    }

    /// Checks an event frame held in an array for stage `in`; see the `UnsafeRawBufferPointer` overload.
    package static func checkIngress(_ frame: [UInt8]) throws(EventValidationError) -> EnvelopeFields {
        try withBytes(of: frame, checkIngress)
    }

    /// The fast path of ``checkIngress(_:)-(UnsafeRawBufferPointer)`` alone: the envelope when the scans
    /// show the event valid at stage `in`, `nil` when they cannot tell.
    static func fastIngress(_ frame: UnsafeRawBufferPointer) -> EnvelopeFields? {
        guard let fields = try? scanEnvelope(frame), isValidIngress(frame, fields) else { return nil }
        return fields
    }

    /// The fast path on an array; see the `UnsafeRawBufferPointer` overload.
    static func fastIngress(_ frame: [UInt8]) -> EnvelopeFields? {
        frame.withUnsafeBytes { buffer in fastIngress(buffer) }
    }

    /// Whether the event whose envelope scanned to `fields` is surely valid at stage `in`: the checks of
    /// ``validate(_:stage:)-(JSONValue,_)`` after the envelope's, on bytes.
    ///
    /// `false` means "not sure", never "invalid": the full path decides.
    static func isValidIngress(_ frame: UnsafeRawBufferPointer, _ fields: EnvelopeFields) -> Bool {
        !isReservedSource(fields.source) && vouchedData(frame, fields) != nil
    }

    /// The type of an event whose envelope scanned to `fields`, when the scans show it surely valid at
    /// stage `in` (the checks of ``validate(_:stage:)-(JSONValue,_)`` after the envelope's, on bytes);
    /// `nil` when they cannot tell.
    ///
    /// - Parameter dataMembers: The members of `data` named in ``IngressShape/dataKeys`` when the envelope's
    ///   scan found them (``scanEnvelopeAndData(_:)``); `nil` to scan `data` here.
    static func vouchedData(_ frame: UnsafeRawBufferPointer, _ fields: EnvelopeFields, dataMembers: JSONScanner.Members? = nil)
        -> EventType?
    {
        Identifier.withBytes(fields.type) { type in
            Identifier.withBytes(fields.subject) { subject in
                vouchedData(frame, type: type, timeIsValid: fields.time.map(Identifier.isValidTimestamp) ?? true,
                            dataRange: fields.dataRange, subject: subject, dataMembers: dataMembers)
            }
        }
    }

    /// The ingress rules after the envelope's, on bytes: the event's type (`type`), whether its `time`
    /// passes (`timeIsValid`), where its `data` lies and its `subject`. The one place both fast paths
    /// (``checkIngress(_:)-(UnsafeRawBufferPointer)`` and ``envelopeSpans(_:stage:)``) decide. Returns the
    /// event's type when they surely pass, `nil` when they cannot tell.
    ///
    /// `dataMembers`, when given, are the members of `data` named in ``IngressShape/dataKeys`` as the
    /// envelope's scan found them (offsets in `frame`); `data` is then not scanned again.
    static func vouchedData(
        _ frame: UnsafeRawBufferPointer, type: UnsafeBufferPointer<UInt8>, timeIsValid: Bool, dataRange: Range<Int>?,
        subject: UnsafeBufferPointer<UInt8>, dataMembers: JSONScanner.Members? = nil
    ) -> EventType? {
        // Only channel events of the types `IngressShape` knows, all of them ingress types.
        guard timeIsValid, let (eventType, shape) = IngressShape.of(typeBytes: type), let dataRange else { return nil }
        let data = UnsafeRawBufferPointer(rebasing: frame[dataRange])
        let vouched = dataMembers.map { shape.vouchedMembers(of: data, found: $0, at: dataRange.lowerBound) }
            ?? shape.vouchedMembers(of: data)
        guard let members = vouched,
            let cid = IngressRule.plainString(members[IngressShape.cidPosition], in: data),
            // The subject is the cid; compared as bytes, which is stricter than the full path's `String` equality.
            ByteRun.equal(subject, cid)
        else { return nil }
        return eventType
    }

    /// The envelope and typed payload of an ingress event read by scans, for the receipt and membership
    /// types (`message.read`, `message.delivered`, `notification.mark_read`, `notification.mark_unread`,
    /// `member.added`, `member.removed`, `message.deleted`); `nil` for anything the scans cannot vouch for
    /// and for the other types. The same answer as ``validate(_:stage:)-(UnsafeRawBufferPointer,_)`` at `in`
    /// when not `nil`, except that the envelope carries no `data` tree.
    package static func scannedIngress(_ frame: UnsafeRawBufferPointer) -> (envelope: EnvelopeFields, payload: IngressPayload)? {
        guard let (fields, dataMembers) = try? scanEnvelopeAndData(frame),
            let type = vouchedData(frame, fields, dataMembers: dataMembers),
            // Vouched: the members the payload reads are there, plain strings.
            let payload = receiptPayload(type, data: dataMembers, in: frame)
        else { return nil }
        return (fields, payload)
    }

    /// The payload of a receipt or membership event of `type` from the members of its `data` that a
    /// scan of the whole frame found (``IngressShape/dataKeys``, offsets in `frame`), read as text;
    /// `nil` for another type, or when a member it needs is absent, or one it reads (needed or
    /// optional) is not a string without escapes. What ``scannedIngress(_:)`` builds once the rules
    /// vouched for the members, and ``loggedIngress(_:type:)`` without them.
    static func receiptPayload(_ type: EventType, data: JSONScanner.Members, in frame: UnsafeRawBufferPointer) -> IngressPayload? {
        guard data.root == .object else { return nil }
        /// A needed member, by its position in `IngressShape.dataKeyNames`.
        func text(_ position: Int) -> String? {
            IngressRule.plainString(data[position], in: frame).map { String(decoding: $0, as: UTF8.self) }
        }
        /// An optional member: `.some(nil)` when absent, `nil` when present but not plain.
        func optional(_ position: Int) -> String?? {
            data[position] == nil ? .some(nil) : text(position).map { .some($0) }
        }
        let cid = 0, user = 1, message = 2, readAt = 3, deliveredAt = 4
        switch type {
        case .messageRead:
            guard let cid = text(cid), let user = text(user), let message = text(message), let readAt = optional(readAt) else { return nil }
            return .messageRead(cid: cid, userID: user, messageID: message, readAt: readAt)
        case .messageDelivered:
            guard let cid = text(cid), let user = text(user), let message = text(message), let deliveredAt = optional(deliveredAt)
            else { return nil }
            return .messageDelivered(cid: cid, userID: user, messageID: message, deliveredAt: deliveredAt)
        case .notificationMarkRead:
            guard let cid = text(cid), let user = text(user), let readAt = optional(readAt) else { return nil }
            return .notificationMarkRead(cid: cid, userID: user, readAt: readAt)
        case .notificationMarkUnread:
            guard let cid = text(cid), let user = text(user), let message = text(message) else { return nil }
            return .notificationMarkUnread(cid: cid, userID: user, messageID: message)
        case .memberAdded:
            guard let cid = text(cid), let user = text(user) else { return nil }
            return .memberAdded(cid: cid, userID: user)
        case .memberRemoved:
            guard let cid = text(cid), let user = text(user) else { return nil }
            return .memberRemoved(cid: cid, userID: user)
        case .messageDeleted:
            guard let cid = text(cid), let message = text(message) else { return nil }
            return .messageDeleted(cid: cid, messageID: message)
        default:
            return nil
        }
    }

    // MARK: - Shapes of `data`

    /// What one member of an object must be for the fast path to vouch for it.
    ///
    /// Each rule accepts only what the full path (``ingressPayload(_:data:)``) accepts, and only in the
    /// plainest form: strings without escapes, so that their bytes are their text.
    enum IngressRule: Sendable {
        /// The message kinds as bytes, for ``optionalMessageKind``.
        static let regularKind = Array(NewMessage.Kind.regular.rawValue.utf8)
        static let systemKind = Array(NewMessage.Kind.system.rawValue.utf8)

        /// A required `TYPE:ID` string.
        case cid
        /// A required user id: an id not starting with `@`.
        case userID
        /// A required message id.
        case messageID
        /// An optional message id.
        case optionalMessageID
        /// A required strict timestamp.
        case timestamp
        /// An optional strict timestamp.
        case optionalTimestamp
        /// An optional `"regular"` or `"system"`.
        case optionalMessageKind
        /// An optional `true` or `false`.
        case optionalBool
        /// An optional array of user ids, each a string without escapes.
        case optionalUserIDs
        /// A required object of ``IngressShape/message``'s shape.
        case message

        /// Whether the member found at `span` of `object` (`nil`: absent) surely passes the rule.
        func accepts(_ span: JSONScanner.Span?, in object: UnsafeRawBufferPointer) -> Bool {
            switch self {
            case .cid:
                return Self.plainString(span, in: object).map(Identifier.isCID) ?? false
            case .userID:
                return Self.plainString(span, in: object).map(Identifier.isUserID) ?? false
            case .messageID:
                return Self.plainString(span, in: object).map(Identifier.isID) ?? false
            case .optionalMessageID:
                return span == nil || Self.messageID.accepts(span, in: object)
            case .timestamp:
                return Self.plainString(span, in: object).map(Identifier.isTimestamp) ?? false
            case .optionalTimestamp:
                return span == nil || Self.timestamp.accepts(span, in: object)
            case .optionalMessageKind:
                guard let span else { return true }
                guard let text = Self.plainString(span, in: object) else { return false }
                return ByteRun.equal(text, Self.regularKind) || ByteRun.equal(text, Self.systemKind)
            case .optionalBool:
                return span.map { $0.kind == .bool } ?? true
            case .optionalUserIDs:
                guard let span else { return true }
                guard span.kind == .array else { return false }
                return Self.isPlainUserIDArray(UnsafeRawBufferPointer(rebasing: object[span.range]))
            case .message:
                guard let span, span.kind == .object else { return false }
                let message = UnsafeRawBufferPointer(rebasing: object[span.range])
                return IngressShape.message.vouchedMembers(of: message) != nil
            }
        }

        /// Whether `array`, the bytes of a JSON array the scanner accepted, holds only strings without
        /// escapes that are user ids; `false` for anything else (another element, an escape: not sure).
        static func isPlainUserIDArray(_ array: UnsafeRawBufferPointer) -> Bool {
            let bytes = array.assumingMemoryBound(to: UInt8.self)
            func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
            var i = 1  // past `[`
            while i < bytes.count && isSpace(bytes[i]) { i += 1 }
            if i < bytes.count && bytes[i] == UInt8(ascii: "]") { return true }
            while i < bytes.count {
                guard bytes[i] == UInt8(ascii: "\"") else { return false }
                let start = i + 1
                var end = start
                while end < bytes.count && bytes[end] != UInt8(ascii: "\"") {
                    if bytes[end] == UInt8(ascii: "\\") { return false }
                    end += 1
                }
                guard end < bytes.count,
                    Identifier.isUserID(UnsafeBufferPointer(rebasing: bytes[start..<end]))
                else { return false }
                i = end + 1
                while i < bytes.count && isSpace(bytes[i]) { i += 1 }
                guard i < bytes.count else { return false }
                if bytes[i] == UInt8(ascii: "]") { return true }
                guard bytes[i] == UInt8(ascii: ",") else { return false }
                i += 1
                while i < bytes.count && isSpace(bytes[i]) { i += 1 }
            }
            return false
        }

        /// The bytes between the quotes of a string with no escape, or `nil` for anything else.
        @inline(__always)
        static func plainString(_ span: JSONScanner.Span?, in object: UnsafeRawBufferPointer)
            -> UnsafeBufferPointer<UInt8>?
        {
            guard let span, span.kind == .string, !span.hasEscapes else { return nil }
            let text = UnsafeRawBufferPointer(rebasing: object[span.range.lowerBound + 1..<span.range.upperBound - 1])
            return text.assumingMemoryBound(to: UInt8.self)
        }
    }

    /// The members of an object the fast path reads, and the rule of each.
    struct IngressShape: Sendable {
        /// The members' names; a name's position is its rule's.
        let keys: JSONScanner.Keys
        /// One rule per name.
        let rules: [IngressRule]

        /// Per name: its position in ``dataKeys`` (-1 for a name not there, as in ``message``).
        let dataPositions: [Int]

        init(_ members: KeyValuePairs<String, IngressRule>) {
            keys = JSONScanner.Keys(members.map(\.key))
            rules = members.map(\.value)
            dataPositions = members.map { Self.dataKeyNames.firstIndex(of: $0.key) ?? -1 }
        }

        /// Every name the shapes of `data` read: what the envelope's scan finds in `data` in the same pass.
        static let dataKeyNames = ["cid", "user_id", "message_id", "read_at", "delivered_at", "message"]
        /// ``dataKeyNames`` as a scanner's set.
        static let dataKeys = JSONScanner.Keys(dataKeyNames)

        /// The position of `cid` in every shape of `data`.
        static let cidPosition = 0

        static let messageRead = IngressShape([
            "cid": .cid, "user_id": .userID, "message_id": .messageID, "read_at": .optionalTimestamp,
        ])
        static let messageDelivered = IngressShape([
            "cid": .cid, "user_id": .userID, "message_id": .messageID, "delivered_at": .optionalTimestamp,
        ])
        static let notificationMarkRead = IngressShape([
            "cid": .cid, "user_id": .userID, "read_at": .optionalTimestamp,
        ])
        static let notificationMarkUnread = IngressShape([
            "cid": .cid, "user_id": .userID, "message_id": .messageID,
        ])
        static let member = IngressShape(["cid": .cid, "user_id": .userID])
        static let messageDeleted = IngressShape(["cid": .cid, "message_id": .messageID])
        static let messageNew = IngressShape(["cid": .cid, "message": .message])
        /// `data.message` of `message.new`.
        static let message = IngressShape([
            "id": .messageID, "user_id": .userID, "created_at": .timestamp, "type": .optionalMessageKind,
            "silent": .optionalBool, "mentioned_users": .optionalUserIDs, "parent_id": .optionalMessageID,
            "show_in_channel": .optionalBool,
        ])

        /// The shape of `data` for a type the fast path checks; `nil` for the others.
        static func of(_ type: EventType) -> IngressShape? {
            switch type {
            case .messageRead: messageRead
            case .messageDelivered: messageDelivered
            case .notificationMarkRead: notificationMarkRead
            case .notificationMarkUnread: notificationMarkUnread
            case .memberAdded, .memberRemoved: member
            case .messageDeleted: messageDeleted
            case .messageNew: messageNew
            case .channelCreated, .memberUpdated, .notificationMarkAllRead, .userUpdated, .channelTypeUpdated,
                .channelTruncated, .channelHidden, .channelVisible, .channelDeleted, .userDeleted, .userBanned,
                .userUnbanned, .receiptRejected, .receiptSuppressed, .query, .reply:
                nil
            }
        }

        /// The type named by `typeBytes` and the shape of its `data`, with no string made; `nil` for
        /// a type the fast path does not check. The type is found by ``EventType/named(_:)`` (one
        /// `TypeNameSet` of every type: a walk of the shaped types retained and released each entry).
        static func of(typeBytes: UnsafeBufferPointer<UInt8>) -> (type: EventType, shape: IngressShape)? {
            guard let type = EventType.named(typeBytes), let shape = of(type) else { return nil }
            return (type, shape)
        }

        /// ``vouchedMembers(of:)`` from the members of `object` that a scan of the whole frame found
        /// (``dataKeys``, `offset` the object's start in that frame) instead of a scan of its own.
        func vouchedMembers(of object: UnsafeRawBufferPointer, found: JSONScanner.Members, at offset: Int)
            -> JSONScanner.Members?
        {
            guard found.root == .object else { return nil }
            var members = JSONScanner.Members(root: .object)
            for position in dataPositions.indices {
                let source = dataPositions[position]
                guard source >= 0 else { return nil }  // not a shape of `data`
                guard var span = found[source] else { continue }
                span.range = (span.range.lowerBound - offset)..<(span.range.upperBound - offset)
                members[position] = span
            }
            return passed(members, in: object)
        }

        /// The members of `object` when it is an object whose members all surely pass their rules, else `nil`.
        func vouchedMembers(of object: UnsafeRawBufferPointer) -> JSONScanner.Members? {
            guard let members = try? JSONScanner.scan(object, members: keys), members.root == .object else {
                return nil
            }
            return passed(members, in: object)
        }

        /// `members` (found in `object`) when every one surely passes its rule, else `nil`.
        private func passed(_ members: JSONScanner.Members, in object: UnsafeRawBufferPointer) -> JSONScanner.Members? {
            for position in rules.indices where !rules[position].accepts(members[position], in: object) {
                return nil
            }
            return members
        }
    }
}
