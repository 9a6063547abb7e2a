/// Reads one message from the broker frame by frame, as libzmq hands them over
/// (`Socket.receive(dontWait:visiting:)`), into a ``ClientFrames/Inbound``.
///
/// The one BATCH frame of an `EVTS` (hundreds of KB) is decoded where libzmq holds
/// it, each event handed to the caller, rather than copied into an array first:
/// past the allocator's mmap threshold such a copy costs a fresh mapping, its page
/// faults and an munmap per batch. Every other frame is copied and the message
/// parsed by ``ClientFrames/parse(_:)``, so that the client and the plugin runner
/// read replies with the same code.
package struct InboundReader {
    private var frames: [[UInt8]] = []
    /// Whether an EVTS batch was decoded in place, and whether it was well formed.
    private var batch: Bool?

    package init() {}

    /// Takes the message's next frame; the events of an EVTS batch frame go to `event`
    /// (SEQ, topic, event bytes), valid only during the call.
    package mutating func take(
        _ bytes: UnsafeRawBufferPointer,
        event: (UInt64, UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void
    ) {
        if frames.count == 3 && frames[1] == Verb.evts.bytes && frames[0] == WireProtocol.signature {
            batch = DeliveryBatch.decode(bytes, event)
            frames.append([])
        } else {
            frames.append(Array(bytes))
        }
    }

    /// The message read. For an EVTS, `.events` with no deliveries (they went to the
    /// `event` of ``take(_:event:)``), or `.malformed` when the batch broke off (the
    /// events before the break were handed over).
    package func message() -> ClientFrames.Inbound {
        guard let complete = batch else { return ClientFrames.parse(frames) }
        guard frames.count == 4 else { return .malformed("EVTS with \(frames.count) frames, expected 4") }
        guard complete else { return .malformed("EVTS batch is not well formed") }
        return .events(name: String(decoding: frames[2], as: UTF8.self), deliveries: [])
    }
}
