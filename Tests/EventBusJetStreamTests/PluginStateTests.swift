import EventBus
import EventBusJetStream
import Foundation
import Logging
import NATS
import Testing

/// A plugin's state and lease in JetStream KV, against a real one-node cluster.
@Suite(.serialized) struct PluginStateTests {
    static var logger: Logger {
        var logger = Logger(label: "test.plugin-state")
        logger.logLevel = .error
        return logger
    }

    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8(random.below(256)) }
    }

    @Test func aSnapshotLargerThanAChunkComesBackWholeAndTheOldGenerationGoes() throws {
        let test = try TestCluster(nodes: 1)
        let store = try KVPluginStore(servers: test.urls, plugin: "reducer")
        #expect(try store.load() == nil)
        let first = Self.bytes(KVPluginStore.chunkBytes * 2 + 123, seed: 1)
        try store.save(snapshot: first, seq: 41)
        let loaded = try #require(try store.load())
        #expect(loaded.seq == 41)
        #expect(loaded.snapshot == first)

        // A store opened elsewhere (another machine) reads the same.
        let elsewhere = try KVPluginStore(servers: test.urls, plugin: "reducer")
        #expect(try elsewhere.load()?.snapshot == first)

        let second = Self.bytes(1_000, seed: 2)
        try store.save(snapshot: second, seq: 99)
        #expect(try store.load()?.seq == 99)
        #expect(try store.load()?.snapshot == second)
        let connection = try Connection(ConnectOptions(servers: test.urls, allowReconnect: false))
        defer { connection.close() }
        let kv = try JetStream(connection: connection).keyValue(KVPluginStore.bucket)
        #expect(try kv.get("reducer.g1.c0") == nil, "the first generation's chunks are deleted")
        #expect(try kv.get("reducer.g2.c0") != nil)
        // An empty snapshot is a snapshot too.
        try store.save(snapshot: [], seq: 100)
        #expect(try store.load()?.snapshot == [])
    }

    @Test func aChunkThatDoesNotMatchItsManifestIsAnErrorNotAState() throws {
        let test = try TestCluster(nodes: 1)
        let store = try KVPluginStore(servers: test.urls, plugin: "filter")
        try store.save(snapshot: Self.bytes(5_000, seed: 3), seq: 7)
        let connection = try Connection(ConnectOptions(servers: test.urls, allowReconnect: false))
        defer { connection.close() }
        let kv = try JetStream(connection: connection).keyValue(KVPluginStore.bucket)
        try kv.put("filter.g1.c0", Self.bytes(5_000, seed: 4))
        #expect(throws: PluginStoreError.self) { try store.load() }
        try kv.delete("filter.g1.c0")
        #expect(throws: PluginStoreError.self) { try store.load() }
    }

    @Test func anInstanceThatDidNotSeeTheLatestSaveCannotOverwriteIt() throws {
        let test = try TestCluster(nodes: 1)
        let old = try KVPluginStore(servers: test.urls, plugin: "reducer")
        let new = try KVPluginStore(servers: test.urls, plugin: "reducer")
        try old.save(snapshot: [1], seq: 1)
        _ = try new.load()
        try new.save(snapshot: [2], seq: 2)
        // `old` last saw revision 1: its save would undo its successor's.
        #expect(throws: PluginStoreError.self) { try old.save(snapshot: [3], seq: 3) }
        #expect(try new.load()?.snapshot == [2])
    }

    @Test func oneHolderAtATimeARestartInPlaceTakesItAtOnceAndADeadHoldersLeaseExpires() throws {
        let test = try TestCluster(nodes: 1)
        let first = try PluginLease(servers: test.urls, plugin: "reducer", holder: "m1:/data", ttl: .seconds(3), logger: Self.logger)
        #expect(try first.acquire(until: { false }))
        #expect(try first.renew())

        // Another machine waits while the lease is held (a second, well within the TTL).
        let other = try PluginLease(servers: test.urls, plugin: "reducer", holder: "m2:/data", ttl: .seconds(3), logger: Self.logger)
        let giveUp = ContinuousClock.now + .seconds(1)
        #expect(try other.acquire(until: { ContinuousClock.now > giveUp }) == false, "taken while held")

        // The same holder (a restart in place after a SIGKILL) takes it over at once…
        let again = try PluginLease(servers: test.urls, plugin: "reducer", holder: "m1:/data", ttl: .seconds(3), logger: Self.logger)
        #expect(try again.acquire(until: { false }))
        // …and the instance before it has lost it: its next renewal finds the revision moved.
        #expect(try first.renew() == false)

        // `again` dies without releasing: once its lease expired, the other machine gets it.
        let deadline = ContinuousClock.now + .seconds(30)
        #expect(try other.acquire(until: { ContinuousClock.now > deadline }), "the lease of a dead holder never expired")
        #expect(try again.renew() == false)

        // A released lease is free at once.
        other.release()
        let next = try PluginLease(servers: test.urls, plugin: "reducer", holder: "m3:/data", ttl: .seconds(3), logger: Self.logger)
        let soon = ContinuousClock.now + .seconds(1)
        #expect(try next.acquire(until: { ContinuousClock.now > soon }))
    }
}
