import EventBus
import NATS
import Synchronization

/// A plugin's committed state in a JetStream KV bucket instead of its data directory, so
/// that the plugin, started on another machine, resumes from its last snapshot
/// (`eventbus up --backend`, docs/scale-out.md).
///
/// The bucket `EVENTBUS_STATE` holds, per plugin NAME, a manifest `NAME.manifest` and the
/// snapshot's bytes in chunks `NAME.g<generation>.c<index>` (each at most
/// ``chunkBytes``: a KV value is one NATS message, 1 MiB at most by default). A save
/// writes the next generation's chunks first, then the manifest, whose one write is the
/// commit; then it deletes the previous generation's chunks. A crash before the manifest
/// leaves the previous snapshot whole; the manifest's CRC-32C and size catch chunks that
/// do not match it. The manifest is written with a compare-and-set on the revision this
/// store last read or wrote: an instance that lost its lease (``PluginLease``) and still
/// saves fails instead of overwriting its successor's state.
public final class KVPluginStore: PluginStore, Sendable {
    /// The bucket of every plugin's state.
    public static let bucket = "EVENTBUS_STATE"
    /// The variable in a plugin's environment that names the cluster keeping its state and
    /// lease (`nats://h1:4222,h2:4222`); `eventbus up --backend` sets it (PluginMain).
    public static let environmentVariable = "EVENTBUS_STATE"
    /// The variable naming the PEM file of the authorities that sign that cluster's
    /// certificates, for TLS (`eventbus up --backend-ca` sets it).
    public static let authoritiesVariable = "EVENTBUS_STATE_CA"
    /// The largest chunk written.
    public static let chunkBytes = 256 * 1024

    /// The plugin's name, the keys' prefix.
    public let name: String
    private let connection: Connection
    private let jetStream: JetStream
    private let kv: KeyValue
    /// The manifest's revision as this store last read or wrote it; nil: none seen.
    private let manifestRevision = Mutex<UInt64?>(nil)

    /// Connects to `servers` and opens (or makes) the bucket, with `replicas` copies
    /// (default: 3 with three servers or more, else 1).
    public init(servers: [String], plugin name: String, replicas: Int? = nil, trustedCertificates: String? = nil) throws(NATSError) {
        self.name = name
        connection = try Connection(ConnectOptions(servers: servers, name: "eventbus-plugin-\(name)", timeout: .seconds(2),
                                                   allowReconnect: true, maxReconnect: -1, reconnectWait: .seconds(1),
                                                   trustedCertificates: trustedCertificates))
        let jetStream = try JetStream(connection: connection)
        self.jetStream = jetStream
        let config = KeyValueConfig(bucket: Self.bucket, history: 1, replicas: replicas ?? (servers.count >= 3 ? 3 : 1))
        kv = try ClusterWarmUp.bucket(config, on: jetStream)
    }

    var manifestKey: String { "\(name).manifest" }
    func chunkKey(generation: UInt64, index: Int) -> String { "\(name).g\(generation).c\(index)" }

    /// What the manifest says.
    struct Manifest: Equatable {
        let generation: UInt64
        let seq: UInt64
        let chunks: Int
        let bytes: Int
        let checksum: UInt32

        var json: [UInt8] {
            var w = JSONWriter()
            w.beginObject()
            w.key("generation"); w.int(Int64(generation))
            w.key("seq"); w.int(Int64(seq))
            w.key("chunks"); w.int(chunks)
            w.key("bytes"); w.int(bytes)
            w.key("crc32c"); w.int(Int64(checksum))
            w.endObject()
            return w.bytes
        }

        init(generation: UInt64, seq: UInt64, chunks: Int, bytes: Int, checksum: UInt32) {
            self.generation = generation
            self.seq = seq
            self.chunks = chunks
            self.bytes = bytes
            self.checksum = checksum
        }

        init(json: [UInt8], key: String) throws(PluginStoreError) {
            guard let value = try? JSONParser.parse(json),
                  let generation = value["generation"]?.int64Value, generation > 0,
                  let seq = value["seq"]?.int64Value, seq >= 0,
                  let chunks = value["chunks"]?.int64Value, chunks >= 0,
                  let bytes = value["bytes"]?.int64Value, bytes >= 0,
                  let checksum = value["crc32c"]?.int64Value, checksum >= 0, checksum <= Int64(UInt32.max)
            else { throw PluginStoreError("\(key) is not a snapshot manifest: \(String(decoding: json.prefix(200), as: UTF8.self))") }
            self.init(generation: UInt64(generation), seq: UInt64(seq), chunks: Int(chunks), bytes: Int(bytes), checksum: UInt32(checksum))
        }
    }

    public func load() throws -> (snapshot: [UInt8], seq: UInt64)? {
        // The bucket may have been made a moment ago, its leader not yet elected.
        let manifestKey = manifestKey
        let found = try ClusterWarmUp.retry("get \(Self.bucket)/\(manifestKey)", bucket: Self.bucket, on: jetStream,
                                            wait: ClusterWarmUp.wait) { kv throws(NATSError) in try kv.get(manifestKey) }
        guard let entry = found else {
            manifestRevision.withLock { $0 = nil }
            return nil
        }
        manifestRevision.withLock { $0 = entry.revision }
        let manifest = try Manifest(json: entry.value, key: "\(Self.bucket)/\(manifestKey)")
        var snapshot: [UInt8] = []
        snapshot.reserveCapacity(manifest.bytes)
        for index in 0..<manifest.chunks {
            let key = chunkKey(generation: manifest.generation, index: index)
            guard let chunk = try kv.get(key) else {
                throw PluginStoreError("snapshot chunk \(Self.bucket)/\(key) is missing (manifest: \(manifest.chunks) chunks)")
            }
            snapshot += chunk.value
        }
        guard snapshot.count == manifest.bytes, CRC32C.checksum(snapshot) == manifest.checksum else {
            throw PluginStoreError("the snapshot of \(name) (generation \(manifest.generation)) does not match its manifest: "
                + "\(snapshot.count) bytes, expected \(manifest.bytes) with CRC-32C \(manifest.checksum)")
        }
        return (snapshot, manifest.seq)
    }

    public func save(snapshot: [UInt8], seq: UInt64) throws {
        let expected = manifestRevision.withLock { $0 }
        let current = try kv.get(manifestKey)
        guard current?.revision == expected else {
            throw PluginStoreError("the state of \(name) was saved by another instance meanwhile (revision \(current?.revision ?? 0), "
                + "this one last saw \(expected ?? 0)): not overwritten")
        }
        let previous = try current.map { try Manifest(json: $0.value, key: "\(Self.bucket)/\(manifestKey)") }
        let generation = (previous?.generation ?? 0) + 1
        var index = 0
        var offset = 0
        repeat {
            let end = min(snapshot.count, offset + Self.chunkBytes)
            try kv.put(chunkKey(generation: generation, index: index), Array(snapshot[offset..<end]))
            index += 1
            offset = end
        } while offset < snapshot.count
        let manifest = Manifest(generation: generation, seq: seq, chunks: index, bytes: snapshot.count,
                                checksum: CRC32C.checksum(snapshot))
        guard let written = try commit(manifest.json, expected: expected) else {
            throw PluginStoreError("the state of \(name) was saved by another instance meanwhile: not overwritten")
        }
        manifestRevision.withLock { $0 = written }
        // The previous generation is no longer named: its chunks go (a failure only leaves garbage).
        if let previous {
            for old in 0..<previous.chunks { try? kv.delete(chunkKey(generation: previous.generation, index: old)) }
        }
    }

    /// Writes the manifest only over the revision `expected` (nil: only when there is none);
    /// its new revision, or nil when the revision had moved.
    private func commit(_ manifest: [UInt8], expected: UInt64?) throws(NATSError) -> UInt64? {
        do {
            if let expected { return try kv.update(manifestKey, manifest, expectedRevision: expected) }
            return try kv.create(manifestKey, manifest)
        } catch {
            guard error.isWrongLastSequence else { throw error }
            return nil
        }
    }
}
