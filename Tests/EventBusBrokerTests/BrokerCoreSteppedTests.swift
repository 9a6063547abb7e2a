import EventBus
import Foundation
import Testing
import ZeroMQ

@testable import EventBusBroker

/// The broker's core driven step by step, for what its loop never shows from
/// outside: consumers never get an event before the commit that covers it (a
/// feed between an append and its commit must send nothing of it,
/// architecture.md "Commit"), a PUB that arrives during an fsync waits for the
/// next, and the peers that asked for HELLO options are pruned. No socket: the
/// core sends to an ``OutputRecording``.
@Suite struct BrokerCoreSteppedTests {
    @Test func aFeedBetweenAnAppendAndItsCommitSendsNothingOfIt() throws {
        let bus = try CoreHarness { $0.fsync = .always }
        defer { bus.close() }
        bus.send("CONSUME", ["reader", "earliest", "10", "in/"], correlation: "c-CONSUME")
        #expect(bus.replies().map(\.verb) == ["OK"])
        bus.send("PUB", [Array("in".utf8), Events.read(message: "m1")], correlation: "c-PUB")
        #expect(bus.core.log.headSeq == 1)
        #expect(bus.core.visibleSeq == 0)

        // Appended, not committed: neither its OK nor the event goes out.
        bus.core.pumpConsumers()
        #expect(bus.replies().isEmpty)

        bus.core.commit()
        bus.core.pumpConsumers()
        let after = bus.replies()
        #expect(after.map(\.verb) == ["OK", "EVT"])
        #expect(after.first?.arguments == ["1"])
        #expect(bus.core.visibleSeq == 1)
    }

    /// Under `--fsync always` the loop hands a commit's fsync to the sync worker
    /// and goes on: a PUB that arrives meanwhile is appended and its own fsync
    /// starts at once (two in flight), but it is neither confirmed nor visible
    /// before the first group is, even when its fsync ends first; a third waits
    /// for a free fsync thread.
    @Test func aPubArrivingDuringAnFsyncStartsTheNextAndConfirmsStayInOrder() throws {
        let bus = try CoreHarness { $0.fsync = .always }
        defer { bus.close() }
        let worker = try #require(bus.core.syncWorker)
        #expect(worker.depth == 2)
        /// Waits for the worker's wake-up, then lets the core complete what it finished.
        func finish() throws {
            var poller = Poller()
            poller.add(fileDescriptor: worker.wakeup.fileDescriptor)
            guard try poller.poll(timeoutMilliseconds: 10_000)[0].contains(.readable) else {
                Issue.record("no fsync completed within 10 s")
                return
            }
            bus.core.finishCommits()
        }

        // The first group's fsync is held until the test lets it go.
        let holdFirst = DispatchSemaphore(value: 0)
        bus.core.log.holdNextSync.withLock { $0 = holdFirst }
        bus.send("PUB", [Array("in".utf8), Events.read(message: "m1", id: "e1")], correlation: "first")
        bus.core.advanceCommit()
        #expect(bus.core.inFlight.map(\.group.head) == [1])
        bus.send("PUB", [Array("in".utf8), Events.read(message: "m1", id: "e2")], correlation: "second")
        bus.core.advanceCommit()  // starts at once: two in flight
        #expect(bus.core.inFlight.map(\.group.head) == [1, 2])
        bus.send("PUB", [Array("in".utf8), Events.read(message: "m1", id: "e3")], correlation: "third")
        bus.core.advanceCommit()  // both threads busy: the third waits
        #expect(bus.core.inFlight.map(\.group.head) == [1, 2])

        // The second fsync ends first: nothing is released before the first.
        try finish()
        #expect(bus.replies().isEmpty)
        #expect(bus.core.visibleSeq == 0)
        #expect(bus.core.log.durableSeq == 0)
        #expect(bus.core.inFlight.map(\.group.head) == [1, 2])
        #expect(bus.core.inFlight.map { $0.outcome != nil } == [false, true])

        holdFirst.signal()
        try finish()
        #expect(bus.replies().map(\.correlation) == ["first", "second"])
        #expect(bus.core.visibleSeq == 2)
        #expect(bus.core.log.durableSeq == 2)
        // The third's fsync started as soon as a thread was free.
        #expect(bus.core.inFlight.map(\.group.head) == [3])

        try finish()
        #expect(bus.replies().map(\.correlation) == ["third"])
        #expect(bus.core.visibleSeq == 3)
        #expect(bus.core.inFlight.isEmpty)
    }

    /// A clean stop while an fsync is in flight and more was appended after it: both
    /// groups are made durable and confirmed, none is handed to the stopped fsync thread.
    @Test func closingWithAnFsyncInFlightConfirmsBothGroups() throws {
        let bus = try CoreHarness { $0.fsync = .always }
        defer { bus.close() }
        bus.send("PUB", [Array("in".utf8), Events.read(message: "m1", id: "e1")], correlation: "first")
        bus.core.advanceCommit()
        bus.send("PUB", [Array("in".utf8), Events.read(message: "m1", id: "e2")], correlation: "second")
        bus.core.close()
        #expect(bus.replies().map(\.correlation) == ["first", "second"])
        #expect(bus.core.log.durableSeq == 2)
        #expect(bus.core.inFlight.isEmpty)
    }

    /// ZeroMQ does not say when a peer leaves, so the peers that asked for a HELLO
    /// option are pruned at 10,000 to those with an attached consumer.
    @Test func peersWithAHelloOptionArePrunedAtTenThousandToThoseOfAttachedConsumers() throws {
        let bus = try CoreHarness()
        defer { bus.close() }
        let core = bus.core
        let attached = Array("attached".utf8)
        let consumer = ConsumerState(name: "reader", acked: 0)
        consumer.peer = attached
        core.consumers["reader"] = consumer
        var peers: Set<[UInt8]> = []
        core.remember(attached, true, in: &peers)
        for n in 0..<9_999 { core.remember(Array("gone-\(n)".utf8), true, in: &peers) }
        #expect(peers.count == 10_000)
        core.remember(Array("new".utf8), true, in: &peers)
        #expect(peers == [attached, Array("new".utf8)])
        core.remember(Array("new".utf8), false, in: &peers)
        #expect(peers == [attached])
    }
}
