/// LEB128 varints, zigzag signed integers and length-prefixed strings for snapshots.
struct SnapshotWriter {
    var bytes: [UInt8] = []

    mutating func uint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func int(_ value: Int64) {
        uint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        uint(UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }
}

/// Reads what ``SnapshotWriter`` wrote, throwing ``SnapshotError`` on truncation.
struct SnapshotReader {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func byte() throws(SnapshotError) -> UInt8 {
        guard offset < bytes.count else { throw SnapshotError("truncated at byte \(offset)") }
        offset += 1
        return bytes[offset - 1]
    }

    mutating func uint() throws(SnapshotError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64 else { throw SnapshotError("varint too long at byte \(offset)") }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
        }
    }

    mutating func int() throws(SnapshotError) -> Int64 {
        let z = try uint()
        return Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
    }

    mutating func count(_ what: String) throws(SnapshotError) -> Int {
        let n = try uint()
        // Every counted item takes at least one byte: a larger count is corrupt.
        guard n <= UInt64(bytes.count - offset) else { throw SnapshotError("\(what) count \(n) exceeds the snapshot") }
        return Int(n)
    }

    mutating func string(_ what: String) throws(SnapshotError) -> String {
        let n = try count(what)
        let text = String(decoding: bytes[offset..<(offset + n)], as: UTF8.self)
        offset += n
        return text
    }
}
