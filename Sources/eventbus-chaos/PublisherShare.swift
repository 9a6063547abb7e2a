import ChatWorkload

/// Which lines of a round's workload a publisher process sends: the setup goes first, from
/// the campaign itself; the traffic after it is dealt round-robin to the publishers, so
/// acks race their messages across connections as they do from a real backend's servers.
struct PublisherShare {
    let lines: [[UInt8]]
    let setupCount: Int

    init(count: Int, seed: UInt64) throws {
        var workload = ChatWorkload(count: count, seed: seed)
        lines = try workload.lines()
        setupCount = workload.summary["setup_lines"] ?? 0
    }

    /// The indices of the lines publisher `index` of `publishers` sends.
    func indices(of index: Int, among publishers: Int) -> [Int] {
        Array(stride(from: setupCount + index, to: lines.count, by: publishers))
    }

    /// The indices of the setup lines.
    var setupIndices: Range<Int> { 0..<setupCount }
}
