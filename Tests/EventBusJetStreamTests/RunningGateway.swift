import Dispatch
import Foundation
import EventBusJetStream
import Logging

/// A gateway serving on a thread of its own until ``stop()``, which waits for it.
final class RunningGateway: Sendable {
    let gateway: Gateway
    private let done = DispatchSemaphore(value: 0)

    init(_ config: GatewayConfig) throws {
        gateway = try Gateway(config: config, logger: Logger(label: "test.gateway"))
        let (gateway, done) = (gateway, done)
        Thread {
            gateway.run()
            done.signal()
        }.start()
    }

    func stop() {
        gateway.stop()
        done.wait()
    }
}
