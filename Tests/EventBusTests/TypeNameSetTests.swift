import Testing

@testable import EventBusCore

/// ``TypeNameSet`` answers exactly as a compare with each of its names would (and says which
/// name matched): for its names, for every name one byte off anywhere, and for names of
/// every length around its 8- and 16-byte edges.
@Suite struct TypeNameSetTests {
    private static func contains(_ set: TypeNameSet, _ name: [UInt8]) -> Bool {
        name.withUnsafeBufferPointer { set.contains($0) }
    }

    @Test func itHoldsItsNamesAndNoNameOneByteOff() {
        let names = ["query", "reply", "a", "", "exactly8", "sixteen-bytes-ab", "seventeen-bytes-a", "channel_type.updated",
                     "a-name-of-more-than-sixty-four-bytes-to-pass-the-length-mask-edge-x"].map { Array($0.utf8) }
        let set = TypeNameSet(names)
        for name in names {
            #expect(Self.contains(set, name), "\(String(decoding: name, as: UTF8.self))")
            for index in name.indices {
                var changed = name
                changed[index] ^= 0x01
                #expect(!Self.contains(set, changed), "\(String(decoding: changed, as: UTF8.self)) at \(index)")
            }
            for other in [name + [UInt8(ascii: "x")], Array(name.dropLast()), [UInt8(ascii: "x")] + name] where !names.contains(other) {
                #expect(!Self.contains(set, other), "\(String(decoding: other, as: UTF8.self))")
            }
        }
    }

    /// Names of lengths 0 to 40, each of its own bytes; a set of every other one is asked
    /// for all of them and for each with a byte off in the middle (where only the full
    /// compare of a long name looks).
    @Test func everyLengthAgreesWithAPlainCompare() {
        let all = (0...40).map { length in (0..<length).map { UInt8(97 + ($0 * 7 + length) % 26) } }
        let held = all.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        let set = TypeNameSet(held)
        for name in all {
            #expect(Self.contains(set, name) == held.contains(name), "length \(name.count)")
            #expect(name.withUnsafeBufferPointer { set.index(of: $0) } == held.firstIndex(of: name), "length \(name.count)")
            guard name.count > 0 else { continue }
            var middle = name
            middle[name.count / 2] = UInt8(ascii: "_")
            #expect(Self.contains(set, middle) == held.contains(middle), "length \(name.count), middle changed")
        }
    }

    @Test func everyEventTypeIsFoundByItsNameAndNoOther() {
        for type in EventType.allCases {
            #expect(Array(type.rawValue.utf8).withUnsafeBufferPointer(EventType.named) == type)
        }
        for name in ["", "message", "message.rea", "message.readx", "Message.read", "channel_type.updatee"] {
            #expect(Array(name.utf8).withUnsafeBufferPointer(EventType.named) == nil, "\(name)")
        }
    }
}
