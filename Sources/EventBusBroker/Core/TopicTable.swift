import EventBus

/// The topics of recent records, each kept once: most records share a few topics (an
/// `in` ack and its `out` read share their channel's; a user's notifications share
/// theirs), and a topic array of each record's own cost an allocation on the PUB path,
/// a free on eviction, and about 80 bytes of the cache, faulted in while it grows.
///
/// Direct-mapped: a topic's hash picks one slot, whose topic is handed out when its bytes
/// are the ones asked for; otherwise a new topic is made and takes the slot. A miss costs
/// what a topic cost before, plus the hash: a workload of scattered topics loses nothing
/// else. Topics are arrays, so a topic handed out stays valid whatever the table does next.
struct TopicTable {
    /// Each slot's topic; empty when the slot is free (a topic is never empty: it has two `/`).
    private var slots: [[UInt8]]
    private let mask: Int

    /// A table of `slotCount` slots, a power of two. The default, 16,384 slots (128 KiB of
    /// references), holds a few thousand users' notification topics at each stage of the
    /// default pipeline with few collisions: at 4,096, a fifth of the references forwarded
    /// under the reducer bench's 1,000 users missed and made a topic of their own.
    init(slotCount: Int = 16_384) {
        precondition(slotCount > 0 && slotCount & (slotCount - 1) == 0, "a power of two")
        slots = Array(repeating: [], count: slotCount)
        mask = slotCount - 1
    }

    /// `STAGE/SUBJECT/TYPE`, as ``Topic/make(stage:subject:type:)`` makes it: the table's
    /// array when it holds these bytes, otherwise a new one, which it keeps.
    mutating func topic(stage: [UInt8], subject: ArraySlice<UInt8>, type: ArraySlice<UInt8>) -> [UInt8] {
        let hash = stage.withUnsafeBytes { stage in
            subject.withUnsafeBytes { subject in
                type.withUnsafeBytes { type in Self.hash(type, Self.hash(subject, Self.hash(stage, 0))) }
            }
        }
        return held(hash: hash, count: stage.count + subject.count + type.count + 2) { topic in
            Self.matches(topic, stage: stage, subject: subject, type: type)
        } make: {
            Topic.make(stage: stage, subject: subject, type: type)
        }
    }

    /// `STAGE` then `suffix` (`/SUBJECT/TYPE`, another stage's topic after its stage): the
    /// topic of a record forwarded by reference to `stage`. The table's array when it holds
    /// these bytes, otherwise a new one, which it keeps.
    ///
    /// Hashed over its two parts, not three, so the same bytes asked for in the other form
    /// may take another slot: either slot's topic is right, the table only holds it twice.
    mutating func topic(stage: [UInt8], suffix: ArraySlice<UInt8>) -> [UInt8] {
        let hash = stage.withUnsafeBytes { stage in
            suffix.withUnsafeBytes { suffix in Self.hash(suffix, Self.hash(stage, 1)) }
        }
        return held(hash: hash, count: stage.count + suffix.count) { topic in
            stage.withUnsafeBytes { stage in Self.starts(topic, at: 0, with: stage) }
                && suffix.withUnsafeBytes { suffix in Self.starts(topic, at: stage.count, with: suffix) }
        } make: {
            stage + suffix
        }
    }

    /// The topic of `hash`'s slot when it is `count` bytes long and `same`; otherwise `make()`,
    /// which takes the slot.
    @inline(__always)
    private mutating func held(
        hash: UInt64, count: Int, _ same: (UnsafeRawBufferPointer) -> Bool, make: () -> [UInt8]
    ) -> [UInt8] {
        let slot = Int(truncatingIfNeeded: hash >> 20) & mask
        let hit = slots.withUnsafeBufferPointer { slots in
            slots[slot].count == count && slots[slot].withUnsafeBytes(same)
        }
        if hit { return slots[slot] }
        let made = make()
        slots[slot] = made
        return made
    }

    /// Whether `topic` holds `part` from `offset` on (within its length, already checked).
    @inline(__always)
    private static func starts(_ topic: UnsafeRawBufferPointer, at offset: Int, with part: UnsafeRawBufferPointer) -> Bool {
        ByteRun.equal(UnsafeRawBufferPointer(rebasing: topic[offset..<offset + part.count]), part)
    }

    /// Whether `topic` is `stage/subject/type` (its length already checked). Each part is
    /// compared where it must lie, so nothing is counted along the way: a local counter that
    /// closures update was boxed and checked for exclusive access on every lookup.
    @inline(__always)
    private static func matches(
        _ topic: UnsafeRawBufferPointer, stage: [UInt8], subject: ArraySlice<UInt8>, type: ArraySlice<UInt8>
    ) -> Bool {
        let subjectStart = stage.count + 1, typeStart = subjectStart + subject.count + 1
        return topic[subjectStart - 1] == UInt8(ascii: "/") && topic[typeStart - 1] == UInt8(ascii: "/")
            && stage.withUnsafeBytes { starts(topic, at: 0, with: $0) }
            && subject.withUnsafeBytes { starts(topic, at: subjectStart, with: $0) }
            && type.withUnsafeBytes { starts(topic, at: typeStart, with: $0) }
    }

    /// Folds `bytes` into `seed`, eight bytes at a time (a multiply and a rotate per word).
    @inline(__always)
    private static func hash(_ bytes: UnsafeRawBufferPointer, _ seed: UInt64) -> UInt64 {
        var hash = (seed ^ UInt64(bytes.count)) &* 0x9E37_79B9_7F4A_7C15
        var offset = 0
        while offset + 8 <= bytes.count {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
            hash = hash << 29 | hash >> 35
            offset += 8
        }
        var tail: UInt64 = 0
        while offset < bytes.count {
            tail = tail << 8 | UInt64(bytes[offset])
            offset += 1
        }
        return (hash ^ tail) &* 0x9E37_79B9_7F4A_7C15
    }
}
