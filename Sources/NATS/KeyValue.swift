import CNATS

/// The configuration of a KV bucket (a stream named `KV_<bucket>` underneath).
public struct KeyValueConfig: Sendable, Equatable {
    public var bucket: String
    /// Revisions kept per key, 1 to 64.
    public var history: Int
    /// How long a value lives after its last put, `nil` for ever: for leases.
    public var ttl: Duration?
    public var storage: StorageType
    public var replicas: Int

    public init(bucket: String, history: Int = 1, ttl: Duration? = nil, storage: StorageType = .file, replicas: Int = 1) {
        self.bucket = bucket
        self.history = history
        self.ttl = ttl
        self.storage = storage
        self.replicas = replicas
    }
}

/// One value of a key as the bucket holds it.
public struct KeyValueEntry: Sendable, Equatable {
    public var key: String
    public var value: [UInt8]
    /// The bucket-wide sequence of the put that wrote this value: what an update expects.
    public var revision: UInt64

    public init(key: String, value: [UInt8], revision: UInt64) {
        self.key = key
        self.value = value
        self.revision = revision
    }
}

/// A KV bucket: values by key with a revision each, and compare-and-set by revision.
///
/// libnats's KV store takes its JetStream context's lock, so this may be shared.
public final class KeyValue: @unchecked Sendable {
    /// Kept alive as long as the bucket.
    public let jetStream: JetStream
    public let bucket: String
    let handle: OpaquePointer

    init(jetStream: JetStream, bucket: String, handle: OpaquePointer) {
        self.jetStream = jetStream
        self.bucket = bucket
        self.handle = handle
    }

    deinit { kvStore_Destroy(handle) }

    /// Writes `value` whatever the key holds; returns the new revision.
    @discardableResult
    public func put(_ key: String, _ value: [UInt8]) throws(NATSError) -> UInt64 {
        try write("put \(bucket)/\(key)", value) { revision, bytes, count in kvStore_Put(&revision, handle, key, bytes, count) }
    }

    /// Writes `value` only when the key has none (never written, or deleted); a key that
    /// has one fails with ``NATSError/isWrongLastSequence``.
    @discardableResult
    public func create(_ key: String, _ value: [UInt8]) throws(NATSError) -> UInt64 {
        try write("create \(bucket)/\(key)", value) { revision, bytes, count in kvStore_Create(&revision, handle, key, bytes, count) }
    }

    /// Writes `value` only when the key's revision is still `expectedRevision`; a stale
    /// one fails with ``NATSError/isWrongLastSequence``. The compare-and-set of a lease.
    @discardableResult
    public func update(_ key: String, _ value: [UInt8], expectedRevision: UInt64) throws(NATSError) -> UInt64 {
        try write("update \(bucket)/\(key) at revision \(expectedRevision)", value) { revision, bytes, count in
            kvStore_Update(&revision, handle, key, bytes, count, expectedRevision)
        }
    }

    /// The key's current value, `nil` when it has none (never written, or deleted).
    public func get(_ key: String) throws(NATSError) -> KeyValueEntry? {
        var entry: OpaquePointer?
        let status = kvStore_Get(&entry, handle, key)
        if status == NATS_NOT_FOUND { return nil }
        try NATSError.check(status, "get \(bucket)/\(key)")
        // NATS_OK comes with the entry.
        guard let entry else { return nil }
        defer { kvEntry_Destroy(entry) }
        let count = Int(kvEntry_ValueLen(entry))
        let value = kvEntry_Value(entry).map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
        return KeyValueEntry(key: key, value: value, revision: kvEntry_Revision(entry))
    }

    /// Deletes the key's value (a delete marker: the history stays until purged).
    public func delete(_ key: String) throws(NATSError) {
        try NATSError.check(kvStore_Delete(handle, key), "delete \(bucket)/\(key)")
    }

    private func write(
        _ operation: @autoclosure () -> String,
        _ value: [UInt8],
        _ call: (inout UInt64, UnsafeRawPointer?, Int32) -> natsStatus
    ) throws(NATSError) -> UInt64 {
        var revision: UInt64 = 0
        let status = value.withUnsafeBytes { call(&revision, $0.baseAddress, Int32($0.count)) }
        try NATSError.check(status, operation())
        return revision
    }
}

extension JetStream {
    /// Creates the bucket (or binds to it when it exists with this configuration).
    public func createKeyValue(_ config: KeyValueConfig) throws(NATSError) -> KeyValue {
        var native = kvConfig()
        kvConfig_Init(&native)
        native.History = UInt8(clamping: config.history)
        native.TTL = config.ttl?.natsNanoseconds ?? 0
        native.StorageType = config.storage.native
        native.Replicas = Int32(config.replicas)
        var store: OpaquePointer?
        let status = config.bucket.withCString { name in
            native.Bucket = name
            return js_CreateKeyValue(&store, handle, &native)
        }
        try NATSError.check(status, "create bucket \(config.bucket)")
        // NATS_OK comes with the store.
        guard let store else { throw NATSError(status: NATS_ERR.rawValue, operation: "create bucket", text: "no store") }
        return KeyValue(jetStream: self, bucket: config.bucket, handle: store)
    }

    /// Binds to an existing bucket; `isNotFound` when there is none.
    public func keyValue(_ bucket: String) throws(NATSError) -> KeyValue {
        var store: OpaquePointer?
        try NATSError.check(js_KeyValue(&store, handle, bucket), "bucket \(bucket)")
        // NATS_OK comes with the store.
        guard let store else { throw NATSError(status: NATS_ERR.rawValue, operation: "bucket \(bucket)", text: "no store") }
        return KeyValue(jetStream: self, bucket: bucket, handle: store)
    }

    /// Deletes a bucket with all its keys.
    public func deleteKeyValue(_ bucket: String) throws(NATSError) {
        try NATSError.check(js_DeleteKeyValue(handle, bucket), "delete bucket \(bucket)")
    }
}
