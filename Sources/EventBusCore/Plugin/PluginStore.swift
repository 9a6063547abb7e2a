/// Where a plugin's state is committed together with the SEQ it reflects.
///
/// The file store is the default; the protocol is small so that a store in a
/// database (PostgreSQL, SQLite) can take its place without touching plugins.
public protocol PluginStore: Sendable {
    /// The last committed snapshot and the SEQ of the last event it includes, if any.
    func load() throws -> (snapshot: [UInt8], seq: UInt64)?
    /// Commits `snapshot` as the state after event `seq`, atomically.
    func save(snapshot: [UInt8], seq: UInt64) throws
}
