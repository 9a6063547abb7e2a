import Foundation
import Logging
import Testing

@testable import EventBusBroker

/// Runs `body` with a fresh temporary directory, removed afterwards.
func withTemporaryDirectory(_ body: (String) throws -> Void) throws {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("eventbus-log-tests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    try body(path)
}

/// A logger that drops everything.
let quietLogger = Logger(label: "log-tests") { _ in SwiftLogNoOpLogHandler() }

/// A record whose fields all derive from `n`, with an event of `eventBytes` bytes.
func testRecord(_ n: Int, eventBytes: Int = 300) -> PendingRecord {
    var event = Array("{\"n\":\(n)}".utf8)
    while event.count < eventBytes { event.append(UInt8(ascii: "a") + UInt8(event.count % 26)) }
    return PendingRecord(
        topic: Array("in/messaging:general/message.new".utf8),
        source: Array("/chat-api".utf8),
        id: Array("id-\(n)".utf8),
        event: event
    )
}

/// The encoded size of `testRecord(n, eventBytes:)`.
func testRecordSize(_ n: Int, eventBytes: Int = 300) -> Int {
    let r = testRecord(n, eventBytes: eventBytes)
    return 30 + r.topic.count + r.source.count + r.id.count + r.event.count
}

/// Whether `stored` holds exactly `pending` with `seq`.
func matches(_ stored: LogRecord?, _ pending: PendingRecord, seq: UInt64) -> Bool {
    guard let stored else { return false }
    return stored.seq == seq && stored.topic == pending.topic && stored.source == Array(pending.source)
        && stored.id == Array(pending.id) && stored.event == pending.event
}

/// The `.seg` file names in `<directory>/log`, sorted.
func segmentFiles(_ directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory + "/log").filter { $0.hasSuffix(".seg") }.sorted()
}

/// The size of the file at `path`.
func fileSize(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.size] as? NSNumber)?.intValue ?? -1
}
