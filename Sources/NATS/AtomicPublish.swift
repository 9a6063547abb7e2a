import CNATS
import Foundation

/// JetStream's atomic batch publish (nats-server 2.12+, ADR-50), which libnats 3.4
/// predates: the stream setting `allow_atomic` set through the JSON API, and the headers
/// a batch's messages carry.
///
/// A batch is N messages on the stream's subjects with `Nats-Batch-Id` (the same on all,
/// at most 64 characters) and `Nats-Batch-Sequence` 1…N; the last also has
/// `Nats-Batch-Commit: 1`. The server stages them and stores all or none when the commit
/// comes; the commit's ack carries the last message's sequence (the others have the N−1
/// before it). Messages before the commit may go as core publishes, which the server
/// does not answer; a refused batch is answered on the commit.
public enum AtomicPublish {
    public static let batchID = "Nats-Batch-Id"
    public static let batchSequence = "Nats-Batch-Sequence"
    public static let batchCommit = "Nats-Batch-Commit"
    /// The headers of message `sequence` (1-based) of a batch of `count`.
    public static func headers(batch: String, sequence: Int, count: Int) -> Headers {
        var headers: Headers = [batchID: batch, batchSequence: String(sequence)]
        if sequence == count { headers[batchCommit] = "1" }
        return headers
    }

    /// `JSAtomicPublishContainsDuplicateMessageErr`: a `Nats-Msg-Id` of the batch is stored
    /// already (or twice in the batch); nothing of the batch was stored.
    public static let containsDuplicate = 10201
    /// `JSAtomicPublishIncompleteBatchErr`: the server lost part of the batch (a leader
    /// change); nothing stored.
    public static let incomplete = 10176
    /// `JSAtomicPublishTooManyInflight`: the stream has its 50 batches in flight.
    public static let tooManyInflight = 10210
    /// "duplicate message id is in process": another copy of a `Nats-Msg-Id` is being
    /// replicated (an R3 stream); asked again shortly, the server knows its sequence.
    public static let duplicateInProcess = 10158
}

extension JetStream {
    /// Makes sure stream `name` accepts atomic batches (`allow_atomic: true`): reads its
    /// configuration through `$JS.API.STREAM.INFO`, and when the setting is off, sends it
    /// back with the setting on through `$JS.API.STREAM.UPDATE`. Returns `true` when it
    /// changed the stream.
    ///
    /// - Throws: ``NATSError``: no answer, or the server's refusal with its JetStream code
    ///   (a nats-server older than 2.12 refuses the unknown field).
    @discardableResult
    public func allowAtomicPublish(stream name: String) throws(NATSError) -> Bool {
        let info = try apiCall("STREAM.INFO.\(name)", [])
        guard var config = info["config"] as? [String: Any] else {
            throw NATSError(status: NATS_ERR.rawValue, operation: "stream info \(name)", text: "no config in the answer")
        }
        if config["allow_atomic"] as? Bool == true { return false }
        config["allow_atomic"] = true
        let body: Data
        do {
            body = try JSONSerialization.data(withJSONObject: config)
        } catch {
            throw NATSError(status: NATS_ERR.rawValue, operation: "update stream \(name)", text: "\(error)")
        }
        let updated = try apiCall("STREAM.UPDATE.\(name)", Array(body))
        guard (updated["config"] as? [String: Any])?["allow_atomic"] as? Bool == true else {
            throw NATSError(status: NATS_ERR.rawValue, operation: "update stream \(name)",
                            text: "the server did not keep allow_atomic (nats-server 2.12 or newer needed)")
        }
        return true
    }

    /// One JetStream API request, its JSON answer as an object; an `error` in it thrown.
    func apiCall(_ path: String, _ body: [UInt8]) throws(NATSError) -> [String: Any] {
        let subject = "$JS.API." + path
        let reply = try connection.request(subject, body, timeout: options.requestTimeout)
        guard let object = (try? JSONSerialization.jsonObject(with: Data(reply.payload))) as? [String: Any] else {
            throw NATSError(status: NATS_ERR.rawValue, operation: subject, text: "not a JSON object: \(String(decoding: reply.payload.prefix(200), as: UTF8.self))")
        }
        if let error = object["error"] as? [String: Any] {
            throw NATSError(status: NATS_ERR.rawValue, jetStreamCode: error["err_code"] as? Int ?? 0, operation: subject,
                            text: error["description"] as? String ?? "error")
        }
        return object
    }
}
