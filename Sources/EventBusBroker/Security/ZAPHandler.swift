import Logging
import ZeroMQ

/// The ZAP handler (RFC 27) of a CURVE broker, bound on `inproc://zeromq.zap.01`
/// of the broker's context and served from the broker's poll loop.
///
/// A handshake whose client key is listed gets status 200 and the client's
/// name as user id, which libzmq then attaches to every message of that
/// connection (`User-Id`); any other key, or any other mechanism, gets 400 and
/// the connection is refused.
package final class ZAPHandler {
    package static let endpoint = "inproc://zeromq.zap.01"

    package let socket: Socket
    private let names: [[UInt8]: String]
    private let logger: Logger
    /// Handshakes refused since start.
    private(set) var refused = 0
    /// At most one warning per interval for refused handshakes.
    private var refusalLog = RefusalLog()

    /// Binds the handler; must happen before the CURVE sockets accept peers.
    package init(context: Context, clients: [SecurityConfig.Client], logger: Logger) throws(ZMQError) {
        var names: [[UInt8]: String] = [:]
        for client in clients {
            if let key = CurveKeyPair.binaryKey(client.publicKey) { names[key] = client.name }
        }
        self.names = names
        self.logger = logger
        socket = try Socket(context: context, type: .rep)
        try socket.setLinger(0)
        try socket.bind(Self.endpoint)
    }

    /// Answers every request waiting.
    package func drain() {
        while true {
            let request: [[UInt8]]?
            do { request = try socket.receive(dontWait: true) } catch {
                logger.error("ZAP receive failed", metadata: ["error.type": "\(error)"])
                return
            }
            guard let request else { return }
            do { try socket.send(answer(request)) } catch {
                logger.error("ZAP reply failed", metadata: ["error.type": "\(error)"])
            }
        }
    }

    /// Logs the refusals held back, once their interval has passed (from the broker's timers).
    package func tick() {
        if let line = refusalLog.tick(now: Clock.monotonicMilliseconds()) { log(line) }
    }

    private func log(_ line: RefusalLog.Line) {
        logger.warning(line.count == 1 ? "connection refused: unknown key" : "connections refused: unknown keys", metadata: [
            "bus.refused": "\(line.count)", "bus.address": "\(line.lastAddress)",
            "bus.refused_total": "\(refused)",
        ])
    }

    /// The reply to one request: `1.0`, request id, status, text, user id, metadata.
    func answer(_ request: [[UInt8]]) -> [[UInt8]] {
        let version = Array("1.0".utf8)
        guard request.count >= 6, request[0] == version else {
            // Not a ZAP 1.0 request: RFC 27 says answer 500 when we can.
            refused += 1
            return [version, request.count > 1 ? request[1] : [], Array("500".utf8), Array("bad ZAP request".utf8), [], []]
        }
        let requestID = request[1]
        let address = String(decoding: request[3], as: UTF8.self)
        let mechanism = String(decoding: request[5], as: UTF8.self)
        guard mechanism == "CURVE", request.count >= 7, let name = names[request[6]] else {
            refused += 1
            if let line = refusalLog.refused(address: address, now: Clock.monotonicMilliseconds()) { log(line) }
            return [version, requestID, Array("400".utf8), Array("unknown key".utf8), [], []]
        }
        logger.debug("connection authenticated", metadata: ["bus.client": "\(name)", "bus.address": "\(address)"])
        return [version, requestID, Array("200".utf8), Array("OK".utf8), Array(name.utf8), []]
    }
}
