import ChatWorkload
import EventBus
import Foundation
import ZeroMQ

/// `eventbus-bench workload COUNT SEED FILE`: writes the workload and prints what is in it.
func workload(count: Int, seed: UInt64, path: String) throws {
    var generator = ChatWorkload(count: count, seed: seed)
    let start = now()
    try generator.write(to: path)
    let seconds = Double(now() - start) / 1e9
    let counts = generator.summary.keys.sorted().map { "\($0)=\(generator.summary[$0]!)" }.joined(separator: " ")
    print("RESULT mode=workload seed=\(seed) seconds=\(String(format: "%.2f", seconds)) \(counts)")
}

/// `eventbus-bench drain COMMAND_EP [TIMEOUT_S]`: polls STATS until every durable consumer
/// has caught up (lag 0 and the head unchanged, in two polls in a row), then prints the
/// broker's counts that say what the pipeline did.
func drain(endpoint: String, timeout: Double) throws {
    let context = try Context()
    let socket = try dealer(context, endpoint)
    try socket.setReceiveTimeout(10_000)
    let start = now()
    var polls = 0
    var settled = 0
    var lastHead = -1
    while true {
        polls += 1
        try socket.send(frames("STATS", "s\(polls)", []))
        guard let reply = try socket.receive(), reply.count == 4, reply[1] == Array("OK".utf8),
              let stats = try JSONSerialization.jsonObject(with: Data(reply[3])) as? [String: Any] else {
            throw ProcessError("STATS failed")
        }
        let head = (stats["head_seq"] as? Int) ?? 0
        let consumers = (stats["consumers"] as? [[String: Any]]) ?? []
        let caughtUp = !consumers.isEmpty && consumers.allSatisfy { ($0["lag"] as? Int) == 0 }
        settled = caughtUp && head == lastHead ? settled + 1 : 0
        lastHead = head
        if settled >= 2 {
            let diag = (stats["diag"] as? [String: Any]) ?? [:]
            let stages = (stats["stages"] as? [String: Any]) ?? [:]
            print("RESULT mode=drain polls=\(polls) seconds=\(String(format: "%.3f", Double(now() - start) / 1e9)) head_seq=\(head) "
                + "in=\(stages["in"] as? Int ?? 0) out=\(stages["out"] as? Int ?? 0) dedup_hits=\(stats["dedup_hits"] as? Int ?? 0) "
                + "rejected=\(diag["receipt.rejected"] as? Int ?? 0) suppressed=\(diag["receipt.suppressed"] as? Int ?? 0)")
            return
        }
        if Double(now() - start) / 1e9 > timeout { throw ProcessError("not caught up after \(timeout) s (head \(head))") }
        Thread.sleep(forTimeInterval: 0.005)
    }
}
