import Testing
@testable import ZeroMQ

@Suite struct MonitorAndPollerTests {
    let context: Context
    init() throws { context = try Context() }

    @Test func pollerWakesOnAFileDescriptorBesideASocket() throws {
        let socket = try Socket(context: context, type: .pull)
        try socket.bind("inproc://poll-fd")
        let wake = try EventFD()
        let fd = wake.fileDescriptor
        var poller = Poller()
        poller.add(socket)
        poller.add(fileDescriptor: fd)
        #expect(try poller.poll(timeoutMilliseconds: 0) == [[], []])
        wake.signal()
        wake.signal()
        #expect(try poller.poll(timeoutMilliseconds: 1_000) == [[], .readable])
        wake.drain()
        #expect(try poller.poll(timeoutMilliseconds: 0) == [[], []])
    }

    @Test func monitorEventFramesDecode() {
        func head(_ id: UInt16, _ value: UInt32) -> [UInt8] {
            withUnsafeBytes(of: id) { Array($0) } + withUnsafeBytes(of: value) { Array($0) }
        }
        let ep = Array("tcp://127.0.0.1:1".utf8)
        #expect(SocketEvent(frames: [head(0x0001, 7), ep]) == .connected(endpoint: "tcp://127.0.0.1:1"))
        #expect(SocketEvent(frames: [head(0x0200, 7), ep]) == .disconnected(endpoint: "tcp://127.0.0.1:1"))
        #expect(SocketEvent(frames: [head(0x0004, 100), ep])
            == .connectRetried(endpoint: "tcp://127.0.0.1:1", intervalMilliseconds: 100))
        #expect(SocketEvent(frames: [head(0x0400, 0), []]) == .monitorStopped)
        #expect(SocketEvent(frames: [head(0x8000, 3), ep]) == .other(id: 0x8000, value: 3, endpoint: "tcp://127.0.0.1:1"))
        #expect(SocketEvent(frames: [[1, 2, 3], ep]) == nil)
        #expect(SocketEvent(frames: [head(1, 1)]) == nil)
    }

    /// Reads monitor events until one matches, or fails after `timeout` ms.
    func awaitEvent(on monitor: Socket, timeout: Int32 = 3_000, _ matches: (SocketEvent) -> Bool) throws -> SocketEvent? {
        try monitor.setReceiveTimeout(timeout)
        while let event = try monitor.receiveEvent() {
            if matches(event) { return event }
        }
        return nil
    }

    @Test func monitorReportsConnectedThenDisconnectedThenConnectedAgain() throws {
        let server = try Socket(context: context, type: .router)
        try server.setLinger(0)
        try server.bind("tcp://127.0.0.1:*")
        let endpoint = try server.lastEndpoint
        let client = try Socket(context: context, type: .dealer)
        try client.setLinger(0)
        try client.setReconnectInterval(50)
        let monitor = try client.monitor(events: [.connected, .disconnected])
        defer { client.stopMonitor(); monitor.close() }
        try client.connect(endpoint)

        let first = try awaitEvent(on: monitor) { if case .connected = $0 { true } else { false } }
        #expect(first == .connected(endpoint: endpoint))

        server.close()
        let lost = try awaitEvent(on: monitor) { if case .disconnected = $0 { true } else { false } }
        #expect(lost == .disconnected(endpoint: endpoint))

        let again = try Socket(context: context, type: .router)
        try again.setLinger(0)
        try again.bind(endpoint)
        let back = try awaitEvent(on: monitor) { if case .connected = $0 { true } else { false } }
        #expect(back == .connected(endpoint: endpoint))
    }
}
