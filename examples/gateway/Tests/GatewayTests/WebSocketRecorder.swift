import EventBus
import EventBusTesting
import Foundation
import HummingbirdWSClient
import Logging
import Synchronization

/// One websocket client of the gateway that records every frame it receives.
final class WebSocketRecorder: Sendable {
    /// One received frame, parsed.
    struct Frame: Sendable, Equatable {
        let seq: UInt64
        let topic: String
        let type: String
        let text: String
    }

    let url: String
    private let state = Mutex<(frames: [Frame], connected: Bool, closeCode: UInt16?, done: Bool)>(([], false, nil, false))
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(url: String) { self.url = url }

    var frames: [Frame] { state.withLock { $0.frames } }
    var connected: Bool { state.withLock { $0.connected } }
    var finished: Bool { state.withLock { $0.done } }
    var closeCode: UInt16? { state.withLock { $0.closeCode } }

    /// Connects in the background and waits until the upgrade is done.
    func start(readDelay: Duration? = nil) async throws {
        let url = self.url, recorder = self
        var logger = Logger(label: "test.ws")
        logger.logLevel = .critical
        let running = Task {
            let close = try? await WebSocketClient.connect(url: url, logger: logger) { inbound, _, _ in
                recorder.state.withLock { $0.connected = true }
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    if let readDelay { try await Task.sleep(for: readDelay) }  // a simulated slow peer
                    guard case .text(let text) = message else { continue }
                    let json = try JSONParser.parse(Array(text.utf8))
                    let frame = Frame(
                        seq: UInt64(json["seq"]?.int64Value ?? -1),
                        topic: json["topic"]?.stringValue ?? "",
                        type: json["event"]?["type"]?.stringValue ?? "",
                        text: text)
                    recorder.state.withLock { $0.frames.append(frame) }
                }
            }
            recorder.state.withLock { state in
                state.done = true
                if let close, case .unknown(let code) = close.closeCode { state.closeCode = code }
            }
        }
        task.withLock { $0 = running }
        let deadline = ContinuousClock.now + .seconds(20)
        while !connected {
            if finished { throw ProcessError("websocket \(url) closed before it connected") }
            guard ContinuousClock.now < deadline else { throw ProcessError("websocket \(url) did not connect") }
            try await Task.sleep(for: .milliseconds(20))  // a poll interval
        }
    }

    /// Waits until `count` frames arrived (or `seconds` passed) and returns them.
    @discardableResult
    func waitFor(_ count: Int, seconds: Int = 20) async throws -> [Frame] {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while frames.count < count && ContinuousClock.now < deadline && !finished {
            try await Task.sleep(for: .milliseconds(20))  // a poll interval
        }
        return frames
    }

    /// Closes the connection.
    func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
    }
}
