import EventBus
/// The on-disk layout of segment files and records (docs/operations.md).
///
/// All integers are little-endian. A segment file starts with a 16-byte
/// header: magic `EBLG`, `u16` version, `u16` zero, `u64` first SEQ. Each
/// record is
///
/// ```
/// u32 length     bytes after the crc field (22 + topic + source + id + event)
/// u32 crc32c     over those `length` bytes
/// u64 seq
/// u64 timestamp  ms since 1970
/// u16 topic length, u16 source length, u16 id length
/// topic, source, id, event
/// ```
enum RecordFormat {
    static let magic: [UInt8] = Array("EBLG".utf8)
    static let version: UInt16 = 1
    static let fileHeaderSize = 16
    /// `length` and `crc` fields.
    static let prefixSize = 8
    /// seq, timestamp and the three field lengths.
    static let fixedBodySize = 22
    /// Bytes before the topic.
    static let headerSize = prefixSize + fixedBodySize
    /// The largest `length` accepted, written or read.
    static let maxBodySize = 1 << 30

    /// The encoded size of `record`, or an error if a field is too long.
    ///
    /// The record is read where it lies (a pointer into the batch): passed by value, it would be
    /// copied first, a retain and a release of each of its buffers.
    static func encodedSize(_ record: UnsafePointer<PendingRecord>) throws(LogError) -> Int {
        let limit = Int(UInt16.max)
        let t = record.pointee.topic.count, s = record.pointee.sourceCount, i = record.pointee.idCount
        if t > limit || s > limit || i > limit {
            throw LogError(.invalidRecord, "a record's topic, source or id is over \(limit) bytes")
        }
        let body = fixedBodySize + t + s + i + record.pointee.event.count
        if body > maxBodySize {
            throw LogError(.invalidRecord, "a record of \(body) bytes is over the limit of \(maxBodySize)")
        }
        return prefixSize + body
    }

    /// Writes `record` at `p`, which has room for `encodedSize(record)` bytes; returns the bytes written.
    static func encode(_ record: UnsafePointer<PendingRecord>, seq: UInt64, timestamp: UInt64, into p: UnsafeMutableRawPointer) -> Int {
        let t = record.pointee.topic.count, s = record.pointee.sourceCount, i = record.pointee.idCount
        let e = record.pointee.event.count
        let body = fixedBodySize + t + s + i + e
        p.storeBytes(of: UInt32(body).littleEndian, toByteOffset: 0, as: UInt32.self)
        p.storeBytes(of: seq.littleEndian, toByteOffset: 8, as: UInt64.self)
        p.storeBytes(of: timestamp.littleEndian, toByteOffset: 16, as: UInt64.self)
        p.storeBytes(of: UInt16(t).littleEndian, toByteOffset: 24, as: UInt16.self)
        p.storeBytes(of: UInt16(s).littleEndian, toByteOffset: 26, as: UInt16.self)
        p.storeBytes(of: UInt16(i).littleEndian, toByteOffset: 28, as: UInt16.self)
        copy(record.pointee.topic, to: p + headerSize)
        record.pointee.withIdentity { source, id in
            copy(source, to: p + headerSize + t)
            copy(id, to: p + headerSize + t + s)
        }
        copy(record.pointee.event, to: p + headerSize + t + s + i)
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(start: p + prefixSize, count: body))
        p.storeBytes(of: crc.littleEndian, toByteOffset: 4, as: UInt32.self)
        return prefixSize + body
    }

    @inline(__always)
    private static func copy(_ field: [UInt8], to destination: UnsafeMutableRawPointer) {
        field.withUnsafeBytes { source in
            guard let base = source.baseAddress else { return }
            destination.copyMemory(from: base, byteCount: source.count)
        }
    }

    @inline(__always)
    private static func copy(_ field: UnsafeRawBufferPointer, to destination: UnsafeMutableRawPointer) {
        guard let base = field.baseAddress else { return }
        destination.copyMemory(from: base, byteCount: field.count)
    }

    /// The `length` field at the start of `p`.
    static func bodyLength(_ p: UnsafeRawPointer) -> Int {
        Int(UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)))
    }

    /// The SEQ of the record at `p`.
    static func seq(_ p: UnsafeRawPointer) -> UInt64 {
        UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    }

    /// The timestamp of the record at `p`.
    static func timestamp(_ p: UnsafeRawPointer) -> UInt64 {
        UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
    }

    /// Checks the record in `record` (exactly `prefixSize + length` bytes).
    ///
    /// - Returns: `nil` if it is valid, or why not.
    static func check(_ record: UnsafeRawBufferPointer, expectedSeq: UInt64, verifyCRC: Bool) -> String? {
        // Callers pass a buffer of at least `headerSize` bytes, never empty.
        let p = record.baseAddress!
        let body = record.count - prefixSize
        let t = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt16.self)))
        let s = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 26, as: UInt16.self)))
        let i = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 28, as: UInt16.self)))
        if fixedBodySize + t + s + i > body {
            return "field lengths exceed the record length"
        }
        if verifyCRC {
            let stored = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
            let actual = CRC32C.checksum(UnsafeRawBufferPointer(start: p + prefixSize, count: body))
            if stored != actual { return "CRC32C mismatch" }
        }
        let found = seq(p)
        if found != expectedSeq { return "SEQ \(found) where \(expectedSeq) was expected" }
        return nil
    }

    /// Decodes a record already checked with ``check(_:expectedSeq:verifyCRC:)``.
    static func decode(_ record: UnsafeRawBufferPointer) -> LogRecord {
        // Callers pass a checked record, never empty.
        let p = record.baseAddress!
        let t = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt16.self)))
        let s = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 26, as: UInt16.self)))
        let i = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 28, as: UInt16.self)))
        func bytes(_ from: Int, _ count: Int) -> [UInt8] {
            Array(UnsafeRawBufferPointer(rebasing: record[from..<from + count]))
        }
        let topicAt = headerSize
        let sourceAt = topicAt + t
        let idAt = sourceAt + s
        let eventAt = idAt + i
        return LogRecord(
            seq: seq(p),
            timestamp: timestamp(p),
            topic: bytes(topicAt, t),
            source: bytes(sourceAt, s),
            id: bytes(idAt, i),
            event: bytes(eventAt, record.count - eventAt)
        )
    }

    /// The 16-byte segment file header for a segment starting at `firstSeq`.
    static func fileHeader(firstSeq: UInt64) -> [UInt8] {
        var header = magic
        withUnsafeBytes(of: version.littleEndian) { header.append(contentsOf: $0) }
        header.append(contentsOf: [0, 0])
        withUnsafeBytes(of: firstSeq.littleEndian) { header.append(contentsOf: $0) }
        return header
    }

    /// Checks a segment file header; returns `nil` if valid, or why not.
    static func checkFileHeader(_ header: UnsafeRawBufferPointer, firstSeq: UInt64) -> String? {
        if header.count < fileHeaderSize { return "file header is torn (\(header.count) bytes)" }
        if !header.prefix(4).elementsEqual(magic) { return "bad file magic" }
        let v = UInt16(littleEndian: header.loadUnaligned(fromByteOffset: 4, as: UInt16.self))
        if v != version { return "unsupported segment version \(v)" }
        let first = UInt64(littleEndian: header.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        if first != firstSeq { return "header names first SEQ \(first), the file name \(firstSeq)" }
        return nil
    }

    /// The file name of the segment starting at `firstSeq`: 20 decimal digits and `.seg`.
    static func fileName(firstSeq: UInt64) -> String {
        let digits = String(firstSeq)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".seg"
    }

    /// The first SEQ named by a segment file name, or `nil` if it is not one.
    static func firstSeq(fileName: String) -> UInt64? {
        guard fileName.hasSuffix(".seg"), fileName.utf8.count == 24 else { return nil }
        let digits = fileName.prefix(20)
        guard digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return UInt64(digits)
    }
}
