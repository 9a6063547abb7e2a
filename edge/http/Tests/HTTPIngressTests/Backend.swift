import Testing

/// Where `eventbus up` keeps the log, for the process tests that run on both.
enum Backend: String, CaseIterable, CustomTestStringConvertible {
    /// Its own broker.
    case broker
    /// A JetStream cluster (one node, `eventbus cluster up`), behind the gateway that
    /// `eventbus up --backend` runs.
    case jetStream

    var testDescription: String { rawValue }

    /// Runs `body` with the arguments that put `eventbus up` on this backend: none for the
    /// broker; `--backend URLS` of a cluster started for it, stopped after.
    func with<T>(_ body: ([String]) async throws -> T) async throws -> T {
        switch self {
        case .broker: try await body([])
        case .jetStream: try await LocalNATSCluster.with { cluster in try await body(["--backend", cluster.urls]) }
        }
    }
}
