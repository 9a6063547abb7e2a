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
    /// and goes on: PUBs that arrive meanwhile are appended and their own fsyncs
    /// start at once (up to the worker's depth in flight), but none is confirmed
    /// or visible before the first group is, even when their fsyncs end first;
    /// one more waits for a free fsync thread.
    @Test func pubsArrivingDuringAnFsyncStartTheNextAndConfirmsStayInOrder() throws {
        let bus = try CoreHarness { $0.fsync = .always }
        defer { bus.close() }
        let worker = try #require(bus.core.syncWorker)
        let depth = worker.depth
        #expect(depth == 4)
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
        func publish(_ n: Int) {
            bus.send("PUB", [Array("in".utf8), Events.read(message: "m1", id: "e\(n)")], correlation: "pub\(n)")
            bus.core.advanceCommit()
        }

        // The first group's fsync is held until the test lets it go.
        let holdFirst = DispatchSemaphore(value: 0)
        bus.core.log.holdNextSync.withLock { $0 = holdFirst }
        for n in 1...depth { publish(n) }  // each starts at once
        #expect(bus.core.inFlight.map(\.group.head) == (1...depth).map(UInt64.init))
        publish(depth + 1)  // every thread busy: it waits
        #expect(bus.core.inFlight.count == depth)
        #expect(bus.core.log.headSeq == UInt64(depth + 1))

        // The later fsyncs end first: nothing is released before the first.
        var patience = 0
        while bus.core.inFlight.dropFirst().contains(where: { $0.outcome == nil }) && patience < 100 {
            try finish()
            patience += 1
        }
        #expect(bus.replies().isEmpty)
        #expect(bus.core.visibleSeq == 0)
        #expect(bus.core.log.durableSeq == 0)
        #expect(bus.core.inFlight.map { $0.outcome != nil } == [false] + Array(repeating: true, count: depth - 1))

        holdFirst.signal()
        // Under load a wake-up may come before the first group's fsync ends, or several
        // may merge: finish until something is released (bounded), not once.
        var released: [OutputRecording.Message] = []
        for _ in 0..<10 where released.isEmpty {
            try finish()
            released = bus.replies()
        }
        #expect(released.map(\.correlation) == (1...depth).map { "pub\($0)" })
        #expect(bus.core.visibleSeq == UInt64(depth))
        #expect(bus.core.log.durableSeq == UInt64(depth))
        // The last one's fsync started as soon as a thread was free.
        #expect(bus.core.inFlight.map(\.group.head) == [UInt64(depth + 1)])

        var last: [OutputRecording.Message] = []
        for _ in 0..<10 where last.isEmpty {
            try finish()
            last = bus.replies()
        }
        #expect(last.map(\.correlation) == ["pub\(depth + 1)"])
        #expect(bus.core.visibleSeq == UInt64(depth + 1))
        #expect(bus.core.inFlight.isEmpty)
    }

    /// With fsyncs measured, the next fsync in flight starts an fsync ÷ depth after
    /// the last (``SyncPacer``), and the loop is told how long to poll for it.
    @Test func theNextFsyncInFlightWaitsAnFsyncDividedByTheDepth() throws {
        let bus = try CoreHarness { $0.fsync = .always }
        defer { bus.close() }
        #expect(bus.core.syncPacer.depth == 4)
        bus.core.syncPacer.measured(nanoseconds: 8_000_000)  // 8 ms fsyncs: 2 ms apart
        let holdFirst = DispatchSemaphore(value: 0)
        defer { holdFirst.signal() }
        bus.core.log.holdNextSync.withLock { $0 = holdFirst }
        bus.send("PUB", [Array("in".utf8), Events.read(message: "m1", id: "e1")], correlation: "first")
        bus.core.advanceCommit()
        #expect(bus.core.inFlight.count == 1)
        #expect(bus.core.commitDelayMilliseconds == nil, "nothing waits")
        bus.send("PUB", [Array("in".utf8), Events.read(message: "m1", id: "e2")], correlation: "second")
        bus.core.advanceCommit()
        #expect(bus.core.inFlight.count == 1, "started too soon after the first")
        #expect(bus.core.commitDelayMilliseconds == 2)
        bus.clock.advance(milliseconds: 1)
        bus.core.advanceCommit()
        #expect(bus.core.inFlight.count == 1)
        #expect(bus.core.commitDelayMilliseconds == 1)
        bus.clock.advance(milliseconds: 1)
        #expect(bus.core.commitDelayMilliseconds == 0)
        bus.core.advanceCommit()
        #expect(bus.core.inFlight.map(\.group.head) == [1, 2])
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
