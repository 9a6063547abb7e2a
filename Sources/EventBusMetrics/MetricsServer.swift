#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Logging
import Prometheus
import Synchronization

/// A minimal HTTP/1.1 endpoint that serves a Prometheus registry in the text
/// exposition format at `GET /metrics`, on loopback, from its own thread.
///
/// ```swift
/// let registry = MetricsBootstrap.prometheus()
/// let server = try MetricsServer(address: MetricsAddress(parsing: "127.0.0.1:9464"),
///                                registry: registry, logger: logger)
/// server.start()
/// // curl http://127.0.0.1:9464/metrics
/// ```
///
/// Scrapes are served one at a time, each connection closed after its answer;
/// a client that sends nothing is dropped after two seconds.
public final class MetricsServer: Sendable {
    /// The address as bound (port 0 replaced by the chosen port).
    public let address: MetricsAddress
    private let listener: Int32
    private let registry: PrometheusCollectorRegistry
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    private let finished = Mutex<Bool>(false)

    /// Binds and listens; call ``start()`` to serve.
    ///
    /// - Throws: ``MetricsServerError`` when the address cannot be bound.
    public init(address: MetricsAddress, registry: PrometheusCollectorRegistry, logger: Logger) throws(MetricsServerError) {
        self.registry = registry
        self.logger = logger
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw MetricsServerError(.system, "metrics endpoint: socket() failed: \(Self.lastError())") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        do throws(MetricsServerError) {
            let port = try Self.bind(fd, address)
            guard listen(fd, 16) == 0 else { throw MetricsServerError(.system, "metrics endpoint \(address): listen() failed: \(Self.lastError())") }
            self.address = MetricsAddress(host: address.host, port: port)
        } catch {
            close(fd)
            throw error
        }
        listener = fd
    }

    /// Serves scrapes on a new thread until ``stop()``; a second call does nothing.
    public func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in serve() }
        thread.start()
        logger.info("metrics serving", metadata: ["metrics.address": "\(address)"])
    }

    /// Stops serving and closes the listening socket; waits for the thread.
    public func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // Never started (or start raced with stop): nobody else will close the socket.
        guard started.exchange(true, ordering: .acquiringAndReleasing) else {
            close(listener)
            return
        }
        shutdown(listener, Int32(SHUT_RDWR))
        // The serving thread closes the socket on its way out.
        while !finished.withLock({ $0 }) { usleep(1_000) }
    }

    private func serve() {
        defer {
            close(listener)
            finished.withLock { $0 = true }
        }
        while !stopping.load(ordering: .acquiring) {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 200)
            guard ready > 0 else { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            answer(connection)
            close(connection)
        }
    }

    private func answer(_ connection: Int32) {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let request = HTTPRequestHead.read(from: connection) else { return }
        let response: [UInt8]
        switch (request.method, request.path) {
        case ("GET", "/metrics"), ("HEAD", "/metrics"):
            var body: [UInt8] = []
            registry.emit(into: &body)
            response = Self.response(status: "200 OK", type: "text/plain; version=0.0.4; charset=utf-8",
                                     body: body, includeBody: request.method == "GET")
        case (_, "/metrics"):
            response = Self.response(status: "405 Method Not Allowed", type: "text/plain", body: Array("GET only\n".utf8))
        default:
            response = Self.response(status: "404 Not Found", type: "text/plain", body: Array("metrics are at /metrics\n".utf8))
        }
        var offset = 0
        while offset < response.count {
            let written = response[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return }
            offset += written
        }
    }

    private static func response(status: String, type: String, body: [UInt8], includeBody: Bool = true) -> [UInt8] {
        let head = "HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + (includeBody ? body : [])
    }

    private static func bind(_ fd: Int32, _ address: MetricsAddress) throws(MetricsServerError) -> UInt16 {
        let port: UInt16?
        if address.isIPv6 {
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = address.port.bigEndian
            guard inet_pton(AF_INET6, address.host, &socketAddress.sin6_addr) == 1 else {
                throw MetricsServerError(.invalidAddress, "metrics endpoint \(address): not an IPv6 address")
            }
            port = bindAndName(fd, &socketAddress) ? UInt16(bigEndian: socketAddress.sin6_port) : nil
        } else {
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = address.port.bigEndian
            guard inet_pton(AF_INET, address.host, &socketAddress.sin_addr) == 1 else {
                throw MetricsServerError(.invalidAddress, "metrics endpoint \(address): not an IPv4 address")
            }
            port = bindAndName(fd, &socketAddress) ? UInt16(bigEndian: socketAddress.sin_port) : nil
        }
        guard let port else { throw MetricsServerError(.system, "metrics endpoint \(address): bind failed: \(lastError())") }
        return port
    }

    /// Binds `fd` to `socketAddress` (a `sockaddr_in` or `sockaddr_in6`) and
    /// reads back the address as bound, so a port 0 becomes the chosen port.
    private static func bindAndName<Address>(_ fd: Int32, _ socketAddress: inout Address) -> Bool {
        var length = socklen_t(MemoryLayout<Address>.size)
        return withUnsafeMutablePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                Glibc.bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }
}
