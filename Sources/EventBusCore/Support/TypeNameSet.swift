/// A fixed set of event type names, asked on the hot paths whether (and where) it holds a type.
///
/// The broker asks it for every record it routes or delivers (whether the type may leave the
/// broker), and the ingress check for every event at `in` (which shape its `data` has).
/// An array of names (`[[UInt8]]`) retained and released each name it compared, fifteen
/// of them per ask: that was 15 % of the broker loop's samples under the reducer bench. Here
/// each name is three words (its length, its first and its last eight bytes, zero-padded),
/// so a compare is three loads and no reference is touched; names longer than 16 bytes
/// are then compared in full. Both tables are allocated once and never freed: a set
/// lives as long as the process (it is a `static let`).
package struct TypeNameSet: @unchecked Sendable {
    /// Per name: length, first word, last word, offset of its bytes in ``bytes``.
    private let entries: UnsafeBufferPointer<UInt64>
    /// Every name's bytes, one after the other.
    private let bytes: UnsafeBufferPointer<UInt8>
    /// Bit `n` set when a name has `n` bytes (bit 63: 63 or more).
    private let lengths: UInt64

    private static let entryWords = 4

    package init(_ names: [[UInt8]]) {
        var entries: [UInt64] = [], bytes: [UInt8] = [], lengths: UInt64 = 0
        for name in names {
            name.withUnsafeBufferPointer { name in
                entries += [UInt64(name.count), Self.head(name), Self.tail(name), UInt64(bytes.count)]
                bytes += name
                lengths |= 1 << min(name.count, 63)
            }
        }
        self.entries = UnsafeBufferPointer(Self.keep(entries))
        self.bytes = UnsafeBufferPointer(Self.keep(bytes))
        self.lengths = lengths
    }

    /// Whether `name` is one of the set's names.
    package func contains(_ name: UnsafeBufferPointer<UInt8>) -> Bool { index(of: name) != nil }

    /// The position of `name` among the names the set was made of (the first, if it was given twice).
    package func index(of name: UnsafeBufferPointer<UInt8>) -> Int? {
        guard lengths >> UInt64(min(name.count, 63)) & 1 == 1 else { return nil }
        let count = UInt64(name.count), head = Self.head(name), tail = Self.tail(name)
        var entry = 0
        while entry < entries.count {
            if entries[entry] == count && entries[entry + 1] == head && entries[entry + 2] == tail
                && (name.count <= 16 || equalsMiddle(name, at: Int(entries[entry + 3]))) {
                return entry / Self.entryWords
            }
            entry += Self.entryWords
        }
        return nil
    }

    /// Whether the bytes between `name`'s first and last eight equal those of the name stored at `offset`.
    private func equalsMiddle(_ name: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        ByteRun.equal(UnsafeBufferPointer(rebasing: name[8..<(name.count - 8)]),
                      UnsafeBufferPointer(rebasing: bytes[(offset + 8)..<(offset + name.count - 8)]))
    }

    /// The first eight bytes (all of a shorter name), zero-padded.
    @inline(__always)
    private static func head(_ name: UnsafeBufferPointer<UInt8>) -> UInt64 {
        name.count >= 8 ? UnsafeRawBufferPointer(name).loadUnaligned(as: UInt64.self) : padded(name)
    }

    /// The last eight bytes (all of a shorter name), zero-padded.
    @inline(__always)
    private static func tail(_ name: UnsafeBufferPointer<UInt8>) -> UInt64 {
        name.count >= 8 ? UnsafeRawBufferPointer(name).loadUnaligned(fromByteOffset: name.count - 8, as: UInt64.self)
            : padded(name)
    }

    private static func padded(_ name: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var word: UInt64 = 0
        for (index, byte) in name.enumerated() { word |= UInt64(byte) << (8 * UInt64(index)) }
        return word
    }

    /// `elements` in memory of their own that is never freed.
    private static func keep<Element>(_ elements: [Element]) -> UnsafeMutableBufferPointer<Element> {
        let memory = UnsafeMutableBufferPointer<Element>.allocate(capacity: max(elements.count, 1))
        _ = memory.initialize(from: elements)
        return UnsafeMutableBufferPointer(rebasing: memory[..<elements.count])
    }
}
