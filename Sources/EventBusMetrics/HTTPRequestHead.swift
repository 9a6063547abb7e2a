#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The request line of an HTTP/1.x request, read up to the end of its headers.
struct HTTPRequestHead: Equatable {
    /// The longest head accepted; a scrape's is a few hundred bytes.
    static let maximumBytes = 8_192

    let method: String
    let path: String

    /// Reads from `connection` until the blank line that ends the headers.
    /// Returns nil on a timeout, a closed connection, an oversized head or a
    /// malformed request line.
    static func read(from connection: Int32) -> HTTPRequestHead? {
        var head: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1_024)
        while head.count < maximumBytes {
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            head.append(contentsOf: chunk[0..<count])
            if endOfHead(head) != nil { return parse(head) }
        }
        return nil
    }

    /// Parses a complete head (`METHOD PATH HTTP/1.x\r\n…\r\n\r\n`); nil while
    /// the blank line has not arrived or when the request line is malformed.
    static func parse(_ bytes: [UInt8]) -> HTTPRequestHead? {
        // Work on bytes: in a Swift String "\r\n" is one Character.
        guard endOfHead(bytes) != nil, let lineEnd = bytes.firstIndex(where: { $0 == 0x0D || $0 == 0x0A }) else { return nil }
        let parts = bytes[..<lineEnd].split(separator: 0x20).map { String(decoding: $0, as: UTF8.self) }
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return nil }
        let path = parts[1].prefix { $0 != "?" }
        return HTTPRequestHead(method: parts[0], path: String(path))
    }

    /// Where the blank line ending the head is (CRLF CRLF, or LF LF from lenient clients).
    static func endOfHead(_ bytes: [UInt8]) -> Int? {
        var index = 0
        while index + 1 < bytes.count {
            if bytes[index] == 0x0A && bytes[index + 1] == 0x0A { return index }
            if index + 3 < bytes.count && bytes[index] == 0x0D && bytes[index + 1] == 0x0A
                && bytes[index + 2] == 0x0D && bytes[index + 3] == 0x0A { return index }
            index += 1
        }
        return nil
    }
}
