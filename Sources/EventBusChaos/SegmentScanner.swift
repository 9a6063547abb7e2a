import EventBusCore
import Foundation

/// Reads the broker's segment files (docs/operations.md, "Data directory") on its own, with
/// none of the broker's code: the campaign checks the log as it is on disk, and finds where
/// each record ends to tear a tail past the last durable one.
///
/// A segment is a 16-byte header (`EBLG`, u16 version, u16 zero, u64 first SEQ) and records
/// `u32 length, u32 crc32c, u64 seq, u64 timestamp, u16 topic, u16 source, u16 id` lengths
/// then the four fields; integers little-endian, the CRC over the `length` bytes after it.
public enum SegmentScanner {
    /// Where one record lies in its segment file.
    public struct Extent: Sendable, Equatable {
        public let seq: UInt64
        /// Offset of its first byte.
        public let start: Int
        /// Offset just past its last byte.
        public let end: Int
    }

    /// What one segment holds, as far as its records are whole and their CRCs match.
    public struct Contents: Sendable {
        public var records: [LoggedRecord] = []
        public var extents: [Extent] = []
        /// Bytes after the last whole record (a torn tail the broker would cut).
        public var trailingBytes = 0
    }

    /// The bytes of a segment's header, before its first record.
    public static let headerSize = 16
    static let fixedSize = 30

    /// The segment files of `logDirectory`, oldest first.
    public static func segmentPaths(in logDirectory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: logDirectory)
            .filter { $0.hasSuffix(".seg") }
            .sorted()
            .map { logDirectory + "/" + $0 }
    }

    /// Parses one segment file's bytes; stops at the first record that is short or corrupt.
    public static func contents(of bytes: [UInt8]) -> Contents {
        var contents = Contents()
        guard bytes.count >= headerSize, Array(bytes[0..<4]) == Array("EBLG".utf8) else {
            contents.trailingBytes = bytes.count
            return contents
        }
        var offset = headerSize
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        func u64(_ at: Int) -> UInt64 { UInt64(u32(at)) | UInt64(u32(at + 4)) << 32 }
        while offset + fixedSize <= bytes.count {
            let length = u32(offset)
            let end = offset + 8 + length
            guard length >= fixedSize - 8, end <= bytes.count else { break }
            let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[(offset + 8)..<end])) }
            guard crc == UInt32(u32(offset + 4)) else { break }
            let topicLength = u16(offset + 24), sourceLength = u16(offset + 26), idLength = u16(offset + 28)
            var field = offset + fixedSize
            guard field + topicLength + sourceLength + idLength <= end else { break }
            func take(_ count: Int) -> [UInt8] {
                defer { field += count }
                return Array(bytes[field..<(field + count)])
            }
            let topic = String(decoding: take(topicLength), as: UTF8.self)
            let source = String(decoding: take(sourceLength), as: UTF8.self)
            let id = String(decoding: take(idLength), as: UTF8.self)
            let seq = u64(offset + 8)
            contents.records.append(LoggedRecord(seq: seq, topic: topic, source: source, id: id, event: Array(bytes[field..<end])))
            contents.extents.append(Extent(seq: seq, start: offset, end: end))
            offset = end
        }
        contents.trailingBytes = bytes.count - offset
        return contents
    }

    /// Every record of the log in `logDirectory`, in file order.
    public static func records(in logDirectory: String) throws -> [LoggedRecord] {
        try segmentPaths(in: logDirectory).flatMap { path in
            contents(of: Array(try Data(contentsOf: URL(fileURLWithPath: path)))).records
        }
    }
}
