import EventBus
import EventBusTesting
import Foundation

/// A client of `GET /v1/stream`: `curl -N` (a real HTTP client, as docs/http.md's example
/// uses) writing what arrives to a file, read back with ``SSEReader``. It can be paused
/// (SIGSTOP: it reads nothing while stopped) and resumed.
final class StreamClient: @unchecked Sendable {
    let directory: URL
    let process: RunningProcess

    /// Starts `curl -N` on `url` with `headers`.
    init(_ url: String, headers: [String: String] = [:]) throws {
        directory = try TemporaryDirectory.create("eventbus-http-stream")
        var arguments = ["-sS", "-N", "--no-buffer", url]
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { arguments += ["-H", "\(name): \(value)"] }
        process = try RunningProcess("/usr/bin/curl", arguments + ["-o", directory.appendingPathComponent("body").path],
                                     standardError: .file(directory.appendingPathComponent("stderr").path))
    }

    /// What arrived so far.
    var text: String { (try? String(contentsOf: directory.appendingPathComponent("body"), encoding: .utf8)) ?? "" }
    /// The whole messages so far, comments included.
    var messages: [SSEReader.Message] { SSEReader.messages(text) }
    /// The events so far (no comment).
    var events: [SSEReader.Message] { messages.filter { $0.comment == nil } }

    /// Waits until the messages so far satisfy `done`; returns them.
    @discardableResult
    func wait(for what: String, within timeout: Duration = .seconds(120),
              until done: ([SSEReader.Message]) -> Bool) async throws -> [SSEReader.Message] {
        var patience = Patience(timeout)
        repeat {
            let messages = self.messages
            if done(messages) { return messages }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))  // a poll interval
        } while patience.allowsAnotherLook()
        if done(messages) { return messages }  // curl may have exited right after the last bytes
        let log = (try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
        throw ProcessError("stream client: no \(what) within \(timeout) (curl exited: \(!process.isRunning)): \(text.suffix(2_000)) \(log)")
    }

    /// Waits for the opening comment: the server has started the stream.
    func waitUntilOpen() async throws {
        try await wait(for: "opening comment") { $0.first?.comment?.hasPrefix("eventbus stream after") == true }
    }

    func pause() { process.signal(SIGSTOP) }
    func resume() { process.signal(SIGCONT) }

    deinit {
        process.signal(SIGCONT)
        process.signal(SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }
}

extension SSEReader.Message {
    /// The SEQ of `id:`.
    var seq: UInt64? { id.flatMap { UInt64($0) } }
    /// `data:` as JSON.
    var json: JSONValue? { data.flatMap { try? JSONParser.parse(Array($0.utf8)) } }
    /// The message id of a `message.*` event's data: the new message's, or the read watermark's.
    var messageID: String? {
        json?["data"]?["message"]?["id"]?.stringValue ?? json?["data"]?["last_read_message_id"]?.stringValue
    }
}
