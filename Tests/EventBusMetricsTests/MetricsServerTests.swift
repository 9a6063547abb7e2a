import Foundation
import Logging
import Prometheus
import Testing
@testable import EventBusMetrics

@Suite struct MetricsAddressTests {
    @Test(arguments: ["127.0.0.1:9464", "127.9.8.7:0", "localhost:1", "[::1]:9464"])
    func loopbackIsAccepted(_ text: String) throws {
        let address = try MetricsAddress(parsing: text)
        #expect(address.host.hasPrefix("127.") || address.host == "::1")
    }

    @Test(arguments: ["0.0.0.0:9464", "10.0.0.1:9464", "example.com:80", "[::]:9464", "128.0.0.1:1"])
    func nonLoopbackIsRefusedNamingTheOption(_ text: String) {
        #expect { try MetricsAddress(parsing: text) } throws: { error in
            "\(error)".contains("--metrics") && "\(error)".contains("loopback")
        }
    }

    @Test(arguments: ["127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:x", "[::1]9464"])
    func malformedIsRefused(_ text: String) {
        #expect(throws: MetricsServerError.self) { try MetricsAddress(parsing: text) }
    }
}

@Suite struct HTTPRequestHeadTests {
    @Test func parsesTheRequestLineOnceTheHeadIsComplete() {
        #expect(HTTPRequestHead.parse(Array("GET /metrics HTTP/1.1\r\nHost: x\r\n".utf8)) == nil)
        #expect(HTTPRequestHead.parse(Array("GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            == HTTPRequestHead(method: "GET", path: "/metrics"))
        #expect(HTTPRequestHead.parse(Array("GARBAGE\r\n\r\n".utf8)) == nil)
        #expect(HTTPRequestHead.parse(Array("GET /metrics SMTP\r\n\r\n".utf8)) == nil)
    }
}

@Suite struct MetricsServerTests {
    /// One HTTP exchange over a plain socket; returns the whole response.
    static func fetch(_ address: MetricsAddress, _ request: String) throws -> String {
        let handle = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(handle) }
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = address.port.bigEndian
        inet_pton(AF_INET, address.host, &target.sin_addr)
        let connected = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(handle, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw MetricsServerError(.system, "connect failed") }
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(handle, $0.baseAddress, $0.count, 0) }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(handle, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            response += chunk[0..<count]
        }
        return String(decoding: response, as: UTF8.self)
    }

    @Test func servesTheRegistryInPrometheusTextFormat() throws {
        let registry = PrometheusCollectorRegistry()
        PrometheusMetricsFactory(registry: registry).makeCounter(label: "eventbus_test_total", dimensions: [("stage", "in")]).increment(by: 42)
        let server = try MetricsServer(address: MetricsAddress(parsing: "127.0.0.1:0"), registry: registry,
                                       logger: Logger(label: "test"))
        server.start()
        defer { server.stop() }
        #expect(server.address.port != 0)

        let ok = try Self.fetch(server.address, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(ok.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(ok.contains("Content-Type: text/plain; version=0.0.4"))
        #expect(ok.contains("# TYPE eventbus_test_total counter\n"))
        #expect(ok.contains("eventbus_test_total{stage=\"in\"} 42\n"))
        let body = ok.components(separatedBy: "\r\n\r\n").last ?? ""
        #expect(ok.contains("Content-Length: \(body.utf8.count)\r\n"))

        let missing = try Self.fetch(server.address, "GET / HTTP/1.1\r\n\r\n")
        #expect(missing.hasPrefix("HTTP/1.1 404"))
        let wrongMethod = try Self.fetch(server.address, "POST /metrics HTTP/1.1\r\n\r\n")
        #expect(wrongMethod.hasPrefix("HTTP/1.1 405"))
        // A malformed request is dropped without an answer, and the server goes on.
        #expect(try Self.fetch(server.address, "NONSENSE\r\n\r\n").isEmpty)
        #expect(try Self.fetch(server.address, "GET /metrics HTTP/1.0\r\n\r\n").contains(" 42\n"))
    }

    @Test func aPortInUseIsAClearError() throws {
        let registry = PrometheusCollectorRegistry()
        let first = try MetricsServer(address: MetricsAddress(parsing: "127.0.0.1:0"), registry: registry, logger: Logger(label: "test"))
        defer { first.stop() }
        #expect { try MetricsServer(address: first.address, registry: registry, logger: Logger(label: "test")) } throws: { error in
            "\(error)".contains("bind failed")
        }
    }
}
