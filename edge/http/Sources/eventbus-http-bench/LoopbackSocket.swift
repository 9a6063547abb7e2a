import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP connection to a loopback port with plain blocking POSIX calls: the bench's HTTP
/// client, so that what it measures is the server, not a client framework.
struct LoopbackSocket {
    let fd: Int32

    /// Connects to 127.0.0.1:`port`.
    init(port: Int) throws(BenchError) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw BenchError("connect to 127.0.0.1:\(port): errno \(errno)")
        }
    }

    func write(_ bytes: [UInt8]) throws(BenchError) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw BenchError("send: errno \(errno)") }
            sent += n
        }
    }

    /// Reads what is there (blocking until something is), appending to `buffer`; false at the end.
    func read(into buffer: inout [UInt8]) throws(BenchError) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 { throw BenchError("recv: errno \(errno)") }
        if n == 0 { return false }
        buffer += chunk[0..<n]
        return true
    }

    /// One HTTP/1.1 response, read whole: its status (the body must carry a Content-Length).
    func readResponse() throws(BenchError) -> Int {
        var buffer: [UInt8] = []
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            if let end = buffer.firstRange(of: separator) {
                let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                while buffer.count < end.upperBound + length {
                    guard try read(into: &buffer) else { throw BenchError("the server closed the connection mid-response") }
                }
                return status
            }
            guard try read(into: &buffer) else { throw BenchError("the server closed the connection") }
        }
    }

    func close() { Glibc.close(fd) }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
