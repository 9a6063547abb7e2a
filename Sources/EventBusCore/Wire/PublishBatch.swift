/// The BATCH frame of a `PUBS` request: a PUB's events in one frame.
///
/// Each event is its length in bytes as an ASCII decimal ended by `\n`, then
/// the event's bytes, with nothing between events:
///
/// ```
/// 311⏎{"specversion":"1.0",…}6⏎@12345
/// ```
///
/// (⏎ is the byte `\n`). Each event is what an EVENT frame of `PUB` holds: a
/// CloudEvents JSON object, or `@SEQ` (forwarding by reference). One frame
/// for the whole batch costs the client, the broker and, with CURVE, the
/// encryption on both sides one frame's work instead of one per event.
package enum PublishBatch {
    /// The bytes one event of `count` bytes takes in a batch.
    package static func encodedSize(eventCount count: Int) -> Int {
        ASCIIDecimal.digits(UInt64(count)) + 1 + count
    }

    /// Writes one event at `destination`, which has room for ``encodedSize(eventCount:)`` bytes;
    /// returns the bytes written.
    package static func write(_ event: UnsafeRawBufferPointer, to destination: UnsafeMutableRawPointer) -> Int {
        var offset = ASCIIDecimal.write(UInt64(event.count), to: destination)
        destination.storeBytes(of: UInt8(ascii: "\n"), toByteOffset: offset, as: UInt8.self)
        offset += 1
        if let base = event.baseAddress { (destination + offset).copyMemory(from: base, byteCount: event.count) }
        return offset + event.count
    }

    /// The events as one BATCH frame.
    package static func encode(_ events: [[UInt8]]) -> [UInt8] { encode(events[...]) }

    /// The events as one BATCH frame.
    ///
    /// Concrete, not generic over the collection: called from another module, a generic one
    /// ran unspecialized and looked up `Element`'s witness at run time, allocating, on every batch.
    package static func encode(_ events: ArraySlice<[UInt8]>) -> [UInt8] {
        var size = 0
        for index in events.indices { size += encodedSize(eventCount: events[index].count) }
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            guard let base = buffer.baseAddress else { return }
            for index in events.indices {
                count += events[index].withUnsafeBytes { write($0, to: base + count) }
            }
        }
    }

    /// The events of a BATCH frame, each as its own array, at most `limit` of them, after
    /// `leading` (the broker's PUBS puts its STAGE frame first: the events go straight into
    /// its argument list, with no second array to copy them from).
    ///
    /// - Throws: `bad_frame` naming the first event whose header is not a length
    ///   and `\n`, or whose bytes run past the frame; `bad_frame` for an empty
    ///   frame; `too_large` past `limit` events.
    package static func split(_ batch: [UInt8], limit: Int, after leading: [[UInt8]] = []) throws(BusError) -> [[UInt8]] {
        guard !batch.isEmpty else {
            throw BusError(.badFrame, "BATCH is empty: it holds one or more events, each LENGTH\\n then the event")
        }
        return try batch.withUnsafeBytes { bytes in Result { () throws(BusError) -> [[UInt8]] in
            var events = leading
            var offset = 0
            while offset < bytes.count {
                guard events.count - leading.count < limit else {
                    throw BusError(.tooLarge, "BATCH: more than \(limit) events in one batch")
                }
                var start = offset
                guard let length = ASCIIDecimal.read(bytes, &start, ending: UInt8(ascii: "\n")),
                      length <= UInt64(bytes.count - start)
                else {
                    throw BusError(.badFrame, "BATCH: event \(events.count - leading.count) at byte \(offset): expected LENGTH\\n and that many bytes of event")
                }
                events.append(Array(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + Int(length))])))
                offset = start + Int(length)
            }
            return events
        } }.get()
    }
}
