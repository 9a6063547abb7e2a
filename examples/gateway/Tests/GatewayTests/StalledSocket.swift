import EventBusTesting
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A websocket client on a raw TCP socket with a tiny receive buffer that stops reading
/// after the upgrade: the stuck client a gateway must not buffer for without bound.
final class StalledSocket {
    let fd: Int32

    /// Connects to `port`, upgrades to a websocket at `path`, and reads nothing more.
    init(port: Int, path: String) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ProcessError("socket() failed") }
        var size: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw ProcessError("connect() failed") }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        // Read the 101 response byte by byte, up to the blank line, and nothing after it.
        var header: [UInt8] = []
        var byte: UInt8 = 0
        while !header.suffix(4).elementsEqual([13, 10, 13, 10]) {
            guard recv(fd, &byte, 1, 0) == 1 else { throw ProcessError("upgrade failed: \(String(decoding: header, as: UTF8.self))") }
            header.append(byte)
        }
        guard String(decoding: header, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
            throw ProcessError("upgrade refused: \(String(decoding: header, as: UTF8.self))")
        }
    }

    /// Reads until the server closes, and returns the close code of its close frame, if any.
    func drainCloseCode() -> UInt16? {
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
            if let code = Self.closeCode(in: data) { return code }
        }
        return Self.closeCode(in: data)
    }

    /// Walks the (unmasked, server-to-client) frames in `data` and returns the close frame's code.
    static func closeCode(in data: [UInt8]) -> UInt16? {
        var index = 0
        while index + 2 <= data.count {
            let opcode = data[index] & 0x0F
            var length = Int(data[index + 1] & 0x7F)
            var start = index + 2
            if length == 126 {
                guard start + 2 <= data.count else { return nil }
                length = Int(data[start]) << 8 | Int(data[start + 1])
                start += 2
            } else if length == 127 {
                guard start + 8 <= data.count else { return nil }
                length = data[start..<start + 8].reduce(0) { $0 << 8 | Int($1) }
                start += 8
            }
            guard start + length <= data.count else { return nil }
            if opcode == 0x8, length >= 2 { return UInt16(data[start]) << 8 | UInt16(data[start + 1]) }
            index = start + length
        }
        return nil
    }

    deinit { close(fd) }
}
