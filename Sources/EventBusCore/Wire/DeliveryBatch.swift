/// The BATCH frame of an `EVTS` message: many deliveries of one consumer in one frame.
///
/// Each event is a line of three ASCII decimals — its SEQ, its topic's length
/// and its event's length, separated by single spaces, ended by `\n` — then
/// the topic's bytes and the event's bytes, with nothing between events:
///
/// ```
/// 1201 32 311⏎in/messaging:general/message.new{"specversion":"1.0",…}1203 20 190⏎in/@bob/user.updated{…}
/// ```
///
/// (⏎ is the byte `\n`). One
/// frame for a whole batch costs a broker, its client and, with CURVE, the
/// encryption on both sides one message's work instead of one per event.
package enum DeliveryBatch {
    /// The bytes one event takes in a batch.
    package static func encodedSize(seq: UInt64, topicCount: Int, eventCount: Int) -> Int {
        ASCIIDecimal.digits(seq) + 1 + ASCIIDecimal.digits(UInt64(topicCount)) + 1 + ASCIIDecimal.digits(UInt64(eventCount)) + 1 + topicCount + eventCount
    }

    /// Writes one event at `destination`, which has room for ``encodedSize(seq:topicCount:eventCount:)``
    /// bytes; returns the bytes written.
    package static func write(seq: UInt64, topic: UnsafeRawBufferPointer, event: UnsafeRawBufferPointer,
                             to destination: UnsafeMutableRawPointer) -> Int {
        var offset = ASCIIDecimal.write(seq, to: destination)
        destination.storeBytes(of: UInt8(ascii: " "), toByteOffset: offset, as: UInt8.self)
        offset += 1
        offset += ASCIIDecimal.write(UInt64(topic.count), to: destination + offset)
        destination.storeBytes(of: UInt8(ascii: " "), toByteOffset: offset, as: UInt8.self)
        offset += 1
        offset += ASCIIDecimal.write(UInt64(event.count), to: destination + offset)
        destination.storeBytes(of: UInt8(ascii: "\n"), toByteOffset: offset, as: UInt8.self)
        offset += 1
        if let base = topic.baseAddress { (destination + offset).copyMemory(from: base, byteCount: topic.count) }
        offset += topic.count
        if let base = event.baseAddress { (destination + offset).copyMemory(from: base, byteCount: event.count) }
        return offset + event.count
    }

    /// A batch of `(seq, topic, event)` triples as one frame (for clients and tests; the broker writes in place).
    package static func encode(_ events: [(seq: UInt64, topic: [UInt8], event: [UInt8])]) -> [UInt8] {
        let size = events.reduce(0) { $0 + encodedSize(seq: $1.seq, topicCount: $1.topic.count, eventCount: $1.event.count) }
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            guard let base = buffer.baseAddress else { return }
            for (seq, topic, event) in events {
                count += topic.withUnsafeBytes { topic in
                    event.withUnsafeBytes { event in write(seq: seq, topic: topic, event: event, to: base + count) }
                }
            }
        }
    }

    /// Reads a batch, calling `body` with each event's SEQ, topic and event bytes (valid during the call).
    ///
    /// - Returns: `false` if the frame is not a well-formed batch (what came before the fault was shown).
    @discardableResult
    package static func decode(_ batch: UnsafeRawBufferPointer,
                              _ body: (UInt64, UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) -> Bool {
        var offset = 0
        while offset < batch.count {
            guard let seq = ASCIIDecimal.read(batch, &offset, ending: UInt8(ascii: " ")),
                  let topicCount = ASCIIDecimal.read(batch, &offset, ending: UInt8(ascii: " ")),
                  let eventCount = ASCIIDecimal.read(batch, &offset, ending: UInt8(ascii: "\n")),
                  topicCount <= UInt64(batch.count - offset),
                  eventCount <= UInt64(batch.count - offset) - topicCount
            else { return false }
            let topicEnd = offset + Int(topicCount), eventEnd = topicEnd + Int(eventCount)
            body(seq, UnsafeRawBufferPointer(rebasing: batch[offset..<topicEnd]),
                 UnsafeRawBufferPointer(rebasing: batch[topicEnd..<eventEnd]))
            offset = eventEnd
        }
        return true
    }

    /// Reads a batch held in an array; see the `UnsafeRawBufferPointer` overload.
    @discardableResult
    package static func decode(_ batch: [UInt8], _ body: (UInt64, UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) -> Bool {
        batch.withUnsafeBytes { decode($0, body) }
    }
}
