import EventBus
import EventBusJetStream
import Foundation
import NATS
import Testing

/// What the gateway's `busy` promises rests on: JetStream stores an atomic batch whole or
/// not at all. A batch cut before its commit (the gateway killed, the connection lost
/// half way) leaves nothing; a batch a second message of which repeats a stored id is
/// refused whole; the same batch sent again, complete, is stored once.
@Suite(.serialized) struct AtomicBatchTests {
    static func payload(_ n: Int) -> [UInt8] { Array(#"{"n":\#(n)}"#.utf8) }

    @Test func aBatchCutBeforeItsCommitStoresNothingAndAFullOneStoresAll() throws {
        let test = try TestCluster(nodes: 1)
        let connection = try Connection(ConnectOptions(servers: test.urls, allowReconnect: false))
        defer { connection.close() }
        let jetStream = try JetStream(connection: connection)
        let stream = StageStream(stage: "in")
        _ = try jetStream.addStream(stream.config(replicas: 1, duplicateWindow: .seconds(60)))
        #expect(try jetStream.allowAtomicPublish(stream: stream.name))

        // Messages 1-4 of a batch of 5 go out; the commit (5) never does.
        for sequence in 1...4 {
            var headers = AtomicPublish.headers(batch: "cut-1", sequence: sequence, count: 5)
            headers[Headers.messageID] = "in/%2Ftest/c\(sequence)"
            try connection.publish(stream.subject, Self.payload(sequence), headers: headers)
        }
        try connection.flush(timeout: .seconds(5))
        #expect(try jetStream.streamInfo(stream.name).messages == 0, "part of a batch without its commit was stored")

        // The same events in a batch of their own, complete: stored once each, in order.
        for sequence in 1...5 {
            var headers = AtomicPublish.headers(batch: "whole-1", sequence: sequence, count: 5)
            headers[Headers.messageID] = "in/%2Ftest/c\(sequence)"
            if sequence < 5 {
                try connection.publish(stream.subject, Self.payload(sequence), headers: headers)
            } else {
                let ack = try jetStream.publish(stream.subject, Self.payload(sequence), messageID: headers[Headers.messageID],
                                                headers: headers)
                #expect(ack.sequence == 5)
            }
        }
        #expect(try jetStream.streamInfo(stream.name).messages == 5)
        #expect(try jetStream.streamInfo(stream.name).lastSequence == 5)

        // A new event with one already stored: the batch is refused whole (the gateway
        // then sends such a PUB one message at a time).
        var first = AtomicPublish.headers(batch: "mixed-1", sequence: 1, count: 2)
        first[Headers.messageID] = "in/%2Ftest/new1"
        try connection.publish(stream.subject, Self.payload(6), headers: first)
        var commit = AtomicPublish.headers(batch: "mixed-1", sequence: 2, count: 2)
        commit[Headers.messageID] = "in/%2Ftest/c2"
        let refused = #expect(throws: NATSError.self) {
            try jetStream.publish(stream.subject, Self.payload(2), messageID: commit[Headers.messageID], headers: commit)
        }
        #expect(refused?.jetStreamCode == AtomicPublish.containsDuplicate, "\(String(describing: refused))")
        #expect(try jetStream.streamInfo(stream.name).messages == 5, "part of a refused batch was stored")
    }
}
