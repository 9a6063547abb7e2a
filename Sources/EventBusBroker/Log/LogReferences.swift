#if canImport(Glibc)
import Glibc
#endif

/// What the rest of a data directory has seen of the log: the SEQ each durable consumer
/// acknowledged (`consumers.json`) and the SEQ each plugin's state snapshot includes
/// (`plugins/NAME/state.snapshot`).
///
/// A log that ends before one of these lost records that were seen: a fsynced record is
/// not cut by a crash, so the disk lost data or the log was damaged, and opening it cut
/// them. Serving then would give new events the SEQs of the lost ones, which consumers
/// and snapshots have already passed (docs/operations.md, "Records lost mid-log").
public struct LogReferences: Sendable, Equatable {
    /// One thing that has seen the log up to ``seq``.
    public struct Reference: Sendable, Equatable, CustomStringConvertible {
        /// What it is, such as `consumer receipt-reducer`.
        public let what: String
        /// The highest SEQ it has seen.
        public let seq: UInt64

        public var description: String { "\(what) at SEQ \(seq)" }
    }

    /// Every reference found, highest SEQ first.
    public let references: [Reference]

    /// Collects the references: `offsets` as loaded from the offset store, and the snapshots
    /// under `<dataDirectory>/plugins/`.
    public init(offsets: [String: UInt64], dataDirectory: String) {
        var found = offsets.map { Reference(what: "consumer \($0.key)", seq: $0.value) }
        let plugins = dataDirectory + "/plugins"
        for name in (try? SystemFile.list(plugins)) ?? [] {
            let path = plugins + "/" + name + "/state.snapshot"
            if let seq = Self.snapshotSeq(path) { found.append(Reference(what: "the snapshot of plugin \(name)", seq: seq)) }
        }
        references = found.sorted { ($0.seq, $1.what) > ($1.seq, $0.what) }
    }

    /// The highest SEQ any reference has seen, 0 when there is none.
    public var highestSeq: UInt64 { references.first?.seq ?? 0 }

    /// The references past `headSeq`, highest first.
    public func beyond(_ headSeq: UInt64) -> [Reference] {
        references.filter { $0.seq > headSeq }
    }

    /// The SEQ in the header of a plugin snapshot (`EBSNAP1\n`, then the SEQ as 8 bytes
    /// little-endian); `nil` when the file is missing or is not one.
    static func snapshotSeq(_ path: String) -> UInt64? {
        let magic = Array("EBSNAP1\n".utf8)
        guard let fd = try? SystemFile.open(path, O_RDONLY) else { return nil }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: magic.count + 8)
        let count = header.withUnsafeMutableBytes { buffer in
            // Non-empty: it has a base address.
            (try? SystemFile.preadAll(fd, buffer.baseAddress!, buffer.count, at: 0, path: path)) ?? 0
        }
        guard count == header.count, header.prefix(magic.count).elementsEqual(magic) else { return nil }
        return (0..<8).reduce(UInt64(0)) { $0 | UInt64(header[magic.count + $1]) << (8 * UInt64($1)) }
    }

    /// The refusal to serve a log that ends at `headSeq`, before these references;
    /// `nil` when none is past it.
    public func refusal(headSeq: UInt64, dataDirectory: String, recovery: LogRecovery) -> LogError? {
        let past = beyond(headSeq)
        guard let highest = past.first else { return nil }
        let listed = past.prefix(3).map(\.description).joined(separator: ", ") + (past.count > 3 ? ", …" : "")
        let cut = recovery.reason.map { " Opening the log just cut \(recovery.truncatedBytes) bytes: \($0)." } ?? ""
        return LogError(.recordsLost, """
            the log ends at SEQ \(headSeq) but \(listed) has seen more: records that were read are gone \
            (the disk lost written data, or the log was damaged).\(cut) The broker does not serve, so that \
            no SEQ is given twice. Keep a copy of \(dataDirectory), then run `eventbus recover --data-dir \
            \(dataDirectory)`: it marks SEQs \(headSeq + 1)…\(highest.seq) as lost, so that new events \
            continue after SEQ \(highest.seq) (docs/operations.md, "Records lost mid-log").
            """)
    }
}
