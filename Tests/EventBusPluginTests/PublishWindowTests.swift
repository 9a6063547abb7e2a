import Testing

@testable import EventBusPlugin

/// The runner's window of unconfirmed output: chunks within the PUB limits,
/// batches settled only whole and only in order, resend after a reconnect.
@Suite struct PublishWindowTests {
    static func events(_ count: Int, bytes: Int = 10) -> [OutgoingEvent] {
        (0..<count).map { _ in OutgoingEvent(bytes: [UInt8](repeating: 0x61, count: bytes)) }
    }

    /// Confirms the chunk sent as request `number`, which must be awaited.
    static func confirm(_ window: inout PublishWindow, _ number: UInt64) throws {
        let place = window.answered(request: number)
        window.confirm(try #require(place))
    }

    /// Issue 14: three batches at most were in flight whatever the disk, so a slow fsync
    /// halved a plugin's throughput. The window now holds what the credit holds.
    @Test func theWindowIsAsDeepAsTheCreditNotAConstantNumberOfBatches() throws {
        var window = PublishWindow()
        #expect(window.hasRoom(batchSize: 500, credit: 100), "an empty window always takes a batch")
        var sent: UInt8 = 0
        for batch in 0..<9 {
            #expect(window.hasRoom(batchSize: 500, credit: 5_000), "batch \(batch)")
            for place in window.add(lastSeq: UInt64(500 * (batch + 1)), inputs: 500, started: .now,
                                    outputs: [("next", Self.events(500))], maxEvents: 1_000, maxBytes: 1 << 20) {
                window.sent(place, request: UInt64(sent), now: .now)
                sent += 1
            }
        }
        #expect(window.inputs == 4_500)
        #expect(window.count == 9)
        #expect(!window.hasRoom(batchSize: 501, credit: 5_000))
        #expect(window.hasRoom(batchSize: 500, credit: 5_000))
        try Self.confirm(&window, 0)
        #expect(window.removeSettled().count == 1)
        #expect(window.inputs == 4_000)
    }

    @Test func outputIsSplitIntoChunksWithinTheEventAndByteLimits() {
        var window = PublishWindow()
        let places = window.add(lastSeq: 9, inputs: 9, started: .now,
                                outputs: [("next", Self.events(25)), ("diag", Self.events(3, bytes: 40))],
                                maxEvents: 10, maxBytes: 100)
        // 25 events of 10 bytes in chunks of 10: 10, 10, 5; then diag at 40 bytes a piece: 2, 1.
        #expect(places.map { window.chunk($0).events.count } == [10, 10, 5, 2, 1])
        #expect(places.map { window.chunk($0).stage } == ["next", "next", "next", "diag", "diag"])
        #expect(window.batches.first?.forwarded == 25)
        #expect(window.batches.first?.diagnostics == 3)
    }

    @Test func aBatchSettlesOnlyWhenAllItsChunksAreConfirmedAndOnlyAfterTheOnesBefore() throws {
        var window = PublishWindow()
        let first = window.add(lastSeq: 5, inputs: 5, started: .now, outputs: [("next", Self.events(4))], maxEvents: 2, maxBytes: 1_000)
        let second = window.add(lastSeq: 8, inputs: 3, started: .now, outputs: [("next", Self.events(1))], maxEvents: 2, maxBytes: 1_000)
        for (n, place) in (first + second).enumerated() { window.sent(place, request: UInt64(n), now: .now) }
        // The second batch is confirmed first: nothing settles, its ACK would skip the first's output.
        try Self.confirm(&window, 2)
        #expect(window.removeSettled().isEmpty)
        try Self.confirm(&window, 0)
        #expect(window.removeSettled().isEmpty)
        try Self.confirm(&window, 1)
        #expect(window.removeSettled().map(\.lastSeq) == [5, 8])
        #expect(window.isEmpty)
        #expect(window.answered(request: 1) == nil)
    }

    @Test func afterAReconnectEveryUnconfirmedChunkIsSentAgainInOrderUnderNewCorrelations() throws {
        var window = PublishWindow()
        let places = window.add(lastSeq: 3, inputs: 3, started: .now, outputs: [("next", Self.events(6))], maxEvents: 2, maxBytes: 1_000)
        for (n, place) in places.enumerated() { window.sent(place, request: UInt64(n), now: .now) }
        try Self.confirm(&window, 1)
        let again = window.unconfirmedForResend()
        #expect(again == [places[0], places[2]])
        #expect(!window.isAwaited(request: 0) && !window.isAwaited(request: 2))
        for (n, place) in again.enumerated() { window.sent(place, request: UInt64(10 + n), now: .now) }
        #expect(window.chunk(places[0]).attempts == 2)
        try Self.confirm(&window, 10)
        try Self.confirm(&window, 11)
        #expect(window.removeSettled().map(\.lastSeq) == [3])
    }
}
