import EventBus
import Foundation
import Testing

@testable import EventBusBroker

/// A failed fsync stops the broker under every policy (docs/operations.md, "Fsync policy"):
/// after one, the kernel may have dropped the dirty pages and cleared the error, so the
/// broker must not confirm nor serve anything more; the next start re-reads and re-syncs the log.
@Suite("A failed fsync stops the broker")
struct FsyncFailureTests {
    static let stage = Array("in".utf8)

    /// Makes the broker's next sync of the log fail with EIO (the hook is atomic: the broker's thread runs).
    static func failNextSync(_ bus: TestBroker) {
        bus.broker.core.log.failNextSync.store(EIO, ordering: .relaxed)
    }

    @Test func aFailedPeriodicFsyncStopsTheBrokerAndARestartRecoversWhatWasConfirmed() throws {
        let bus = try TestBroker { $0.fsync = .periodic }
        defer { bus.stop() }
        let peer = try bus.peer()
        Self.failNextSync(bus)
        // Confirmed after the write, as `periodic` does; the sync that follows it fails.
        #expect(try peer.call("PUB", [Self.stage, Events.read(message: "m1", id: "e1")]).values == ["1"])
        #expect(bus.waitUntilStopped(seconds: 10), "the broker carried on after a failed fsync")
        #expect(bus.runError?.contains("fsync") == true)

        // Nothing more is confirmed (the broker is gone: a short wait shows it).
        try peer.socket.setReceiveTimeout(200)
        #expect(try !peer.call("PUB", [Self.stage, Events.read(message: "m2", id: "e2")]).isOK)

        // The restart re-reads the log: what was confirmed is there, under its SEQ.
        try bus.restart()
        let after = try bus.peer()
        #expect(try after.call("STATS").json["head_seq"] as? Int == 1)
        #expect(try after.call("PUB", [Self.stage, Events.read(message: "m1", id: "e1")]).values == ["1"])
    }

    @Test func aFailedFsyncUnderAlwaysStopsTheBrokerWithoutConfirming() throws {
        let bus = try TestBroker { $0.fsync = .always }
        defer { bus.stop() }
        let peer = try bus.peer()
        Self.failNextSync(bus)
        try peer.send("PUB", [Self.stage, Events.read(message: "m1", id: "e1")])
        #expect(bus.waitUntilStopped(seconds: 10), "the broker carried on after a failed fsync")
        #expect(bus.runError?.contains("fsync") == true)
        try peer.socket.setReceiveTimeout(200)
        #expect(try peer.receive() == nil, "a PUB was answered although its fsync failed")

        // Written but never confirmed: the publisher's retry gets SEQ 1 whether or not it survived.
        try bus.restart()
        #expect(try bus.peer().call("PUB", [Self.stage, Events.read(message: "m1", id: "e1")]).values == ["1"])
    }

    @Test func aFailedFinalFsyncMakesTheBrokerFailUnderOff() throws {
        let bus = try TestBroker { $0.fsync = .off }
        defer { bus.stop() }
        let peer = try bus.peer()
        #expect(try peer.call("PUB", [Self.stage, Events.read(message: "m1", id: "e1")]).values == ["1"])
        // `off` syncs only when stopping: that sync fails, and so does the broker's run.
        Self.failNextSync(bus)
        bus.stop()
        #expect(bus.runError?.contains("fsync") == true, "the broker stopped cleanly after a failed fsync")

        try bus.restart()
        #expect(try bus.peer().call("STATS").json["head_seq"] as? Int == 1)
    }
}
