import EventBus
import EventBusTesting
import Foundation
import Testing
import ZeroMQ

/// A broker whose disk is full answers `busy`; over HTTP that is 503 with `Retry-After`, and
/// the same request goes through once there is space again.
@Suite(.serialized) struct IngressBusyTests {
    static func batch(_ round: Int) -> [UInt8] {
        let padding = String(repeating: "p", count: 2_000)
        return Events.batch((0..<50).map { index in
            Events.event("b\(round)-\(index)", "message.read", subject: "messaging:general",
                         data: #"{"cid":"messaging:general","user_id":"bob","message_id":"m1","pad":"\#(padding)"}"#)
        })
    }

    @Test func aFullDiskIs503WithRetryAfterAndARetryGoesThroughLater() async throws {
        try await Tmpfs.with("eventbus-http-disk", size: "4m") { mountPoint in
            // Half of the 4 MiB taken by a filler, deleted later to give the space back.
            let filler = mountPoint + "/filler"
            #expect(FileManager.default.createFile(atPath: filler, contents: Data(repeating: 0, count: 2 * 1024 * 1024)))
            let broker = try BrokerProcess(arguments: ["--data-dir", mountPoint + "/data", "--log-level", "error"])
            try await broker.start(context: try Context())
            try await broker.terminateAfter {
                let ingress = try IngressProcess(command: broker.commandEndpoint)
                try await ingress.start()
                var refused: (round: Int, exchange: HTTPExchange)?
                for round in 0..<100 where refused == nil {
                    let exchange = try await HTTPExchange.send(ingress.baseURL + "/v1/events", headers: Events.batched, body: Self.batch(round))
                    if exchange.status != 200 { refused = (round, exchange) }
                }
                let (round, busy) = try #require(refused, "the disk never filled")
                #expect(busy.status == 503, "\(busy.text)")
                #expect(busy.code == "busy")
                #expect(busy.headers["retry-after"] == "1")
                let (operations, _) = try OpenAPITests.specification()
                OpenAPITests.check(busy, "POST /v1/events", operations["POST /v1/events"] ?? [:])

                try FileManager.default.removeItem(atPath: filler)
                let retried = try await HTTPExchange.send(ingress.baseURL + "/v1/events", headers: Events.batched, body: Self.batch(round))
                #expect(retried.status == 200, "\(retried.text)")
                try await ingress.terminate()
            }
        }
    }
}
