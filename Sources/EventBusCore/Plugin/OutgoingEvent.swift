
/// One event a plugin publishes: its bytes and, when it passes an input event
/// on unchanged, that event's SEQ.
package struct OutgoingEvent: Sendable {
    /// The event as it is appended.
    package let bytes: [UInt8]
    /// The input SEQ of an event passed on unchanged.
    package var passedSeq: UInt64?

    package init(bytes: [UInt8], passedSeq: UInt64? = nil) {
        self.bytes = bytes
        self.passedSeq = passedSeq
    }

    /// Its EVENT frame: `@SEQ` for an event passed on when the broker forwards
    /// by reference (docs/protocol.md), else the bytes.
    package func frame(byReference: Bool) -> [UInt8] {
        guard byReference, let seq = passedSeq else { return bytes }
        return [UInt8](unsafeUninitializedCapacity: 21) { buffer, count in
            buffer[0] = UInt8(ascii: "@")
            count = 1 + ASCIIDecimal.write(seq, to: UnsafeMutableRawPointer(buffer.baseAddress! + 1))
        }
    }
}
