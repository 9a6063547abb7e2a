extension EventValidator {
    /// The envelope of an event as byte ranges, when one scan shows it valid at `stage` — the
    /// checks of ``scanEnvelope(_:)-(UnsafeRawBufferPointer)``, and at stage `in` those of
    /// ``checkIngress(_:)-(UnsafeRawBufferPointer)`` — with every attribute it reports free of
    /// escapes; `nil` when it cannot tell.
    ///
    /// `nil` never means "invalid": the caller then asks ``scanEnvelope(_:)-(UnsafeRawBufferPointer)``
    /// or ``checkIngress(_:)-(UnsafeRawBufferPointer)``, which decide and word the error. What this
    /// saves is the strings: none is made, so the broker's path from frame to log allocates only the
    /// topic.
    ///
    /// - Parameters:
    ///   - frame: The event's bytes, as received.
    ///   - stage: The stage it is published to; `in` adds the ingress rules.
    package static func envelopeSpans(_ frame: UnsafeRawBufferPointer, stage: String) -> EnvelopeSpans? {
        // At `in` the members of `data` that the ingress rules read are found in the same pass.
        var members = JSONScanner.Members(root: .null), dataMembers = JSONScanner.Members(root: .null)
        do {
            if stage == Stage.in {
                try JSONScanner.scan(frame, members: envelopeKeys, into: &members, nested: IngressShape.dataKeys,
                                     of: dataPosition, into: &dataMembers)
            } else {
                members = try JSONScanner.scan(frame, members: envelopeKeys)
            }
        } catch {
            return nil
        }
        guard members.root == .object,
            let specversion = IngressRule.plainString(members[0], in: frame),
            ByteRun.equal(specversion, specVersionBytes),
            let id = IngressRule.plainString(members[1], in: frame), isPrintableASCII(id, max: maxIDLength),
            let source = IngressRule.plainString(members[2], in: frame), hasScalarCount(source, in: 1...maxSourceLength),
            let type = IngressRule.plainString(members[3], in: frame), Identifier.isEventTypeName(type),
            let subject = IngressRule.plainString(members[4], in: frame), isValidSubject(subject)
        else { return nil }
        // `time` and `replyto` must be strings; `data`, when present, an object.
        if let time = members[5], time.kind != .string { return nil }
        if let replyto = members[6], replyto.kind != .string { return nil }
        if let data = members[7], data.kind != .object { return nil }
        let spans = EnvelopeSpans(
            id: range(of: id, in: frame), source: range(of: source, in: frame), type: range(of: type, in: frame),
            subject: range(of: subject, in: frame), hasTime: members[5] != nil, dataRange: members[7]?.range)
        guard stage == Stage.in else { return spans }
        guard !isReservedSource(source) else { return nil }

        // The ingress rules, where checkIngress's fast path applies them: `time`, if present, a plain timestamp.
        let timeIsValid = members[5].map { IngressRule.plainString($0, in: frame).map(Identifier.isTimestamp) ?? false } ?? true
        guard vouchedData(frame, type: type, timeIsValid: timeIsValid, dataRange: spans.dataRange, subject: subject,
                          dataMembers: dataMembers) != nil
        else { return nil }
        return spans
    }

    /// Where `part`, a piece of `frame`, lies in it.
    private static func range(of part: UnsafeBufferPointer<UInt8>, in frame: UnsafeRawBufferPointer) -> Range<Int> {
        guard let start = part.baseAddress, let base = frame.baseAddress else { return 0..<0 }
        let offset = UnsafeRawPointer(start) - base
        return offset..<offset + part.count
    }

    /// `[ -~]{1,max}`, on bytes.
    static func isPrintableASCII(_ bytes: UnsafeBufferPointer<UInt8>, max: Int) -> Bool {
        guard bytes.count >= 1, bytes.count <= max else { return false }
        for byte in bytes where byte < 0x20 || byte > 0x7E {
            return false
        }
        return true
    }

    /// Whether valid UTF-8 `bytes` hold a number of Unicode scalars in `range`.
    static func hasScalarCount(_ bytes: UnsafeBufferPointer<UInt8>, in range: ClosedRange<Int>) -> Bool {
        if bytes.count <= range.upperBound { return bytes.count >= range.lowerBound }
        // A scalar is a byte that is not a continuation byte (10xxxxxx).
        var scalars = 0
        for byte in bytes where byte & 0xC0 != 0x80 { scalars += 1 }
        return range.contains(scalars)
    }

    /// 1–256 bytes with no `/`, on bytes.
    static func isValidSubject(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 1, bytes.count <= maxSubjectBytes else { return false }
        for byte in bytes where byte == UInt8(ascii: "/") {
            return false
        }
        return true
    }
}
