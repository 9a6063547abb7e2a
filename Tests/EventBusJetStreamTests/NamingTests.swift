import EventBusJetStream
import NATS
import Foundation
import Testing

/// Streams, subjects, message ids, durable names and `--backend` as values.
@Suite struct NamingTests {
    @Test func oneStreamAndSubjectPerStage() {
        let stream = StageStream(stage: "receipt-reducer")
        #expect(stream.name == "EVENTBUS_receipt-reducer")
        #expect(stream.subject == "eventbus.receipt-reducer")
        let config = stream.config(replicas: 3, duplicateWindow: .seconds(600))
        #expect(config.subjects == ["eventbus.receipt-reducer"])
        #expect(config.replicas == 3)
        #expect(config.storage == .file)
        #expect(config.duplicateWindow == .seconds(600))
    }

    @Test func messageIDIsPrintableAndInjective() {
        #expect(MessageID.make(stage: "in", source: "/chat-api", id: "r1") == "in/%2Fchat-api/r1")
        #expect(MessageID.make(stage: "in", source: "a b%", id: "x/y") == "in/a%20b%25/x%2Fy")
        #expect(MessageID.make(stage: "in", source: "é\n", id: "1") == "in/%C3%A9%0A/1")
        // The separator never appears inside a part: these differ.
        #expect(MessageID.make(stage: "in", source: "a/b", id: "c") != MessageID.make(stage: "in", source: "a", id: "b/c"))
        #expect(MessageID.make(stage: "in", source: "s", id: "1") != MessageID.make(stage: "out", source: "s", id: "1"))
        let all = MessageID.make(stage: "diag", source: "/x\u{7f}\t", id: " ~")
        #expect(all.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F })
    }

    @Test func durableNamesKeepNamesApart() {
        #expect(DurableName.make("reader") == "reader")
        #expect(DurableName.make("reader.1") == "reader_d1")
        #expect(DurableName.make("reader_d1") == "reader__d1")
        #expect(DurableName.make("a-b") == "a-b")
        #expect(!DurableName.make("a.b.c").contains("."))
    }

    @Test func backendValuesBecomeServerURLs() throws {
        #expect(try GatewayConfig.servers(backend: "nats://h1,h2:4333,h3") == ["nats://h1:4222", "nats://h2:4333", "nats://h3:4222"])
        #expect(try GatewayConfig.servers(backend: "nats://127.0.0.1:1,nats://127.0.0.1:2") == ["nats://127.0.0.1:1", "nats://127.0.0.1:2"])
        #expect(try GatewayConfig.servers(backend: "nats://gateway:s3cret@h1,nats://gateway:s3cret@h2:4333")
            == ["nats://gateway:s3cret@h1:4222", "nats://gateway:s3cret@h2:4333"])
        #expect(ServerURL.redacted("nats://gateway:s3cret@h1:4222") == "nats://gateway:***@h1:4222")
        #expect(ServerURL.redacted("nats://h1:4222") == "nats://h1:4222")
        #expect(throws: GatewayError.self) { try GatewayConfig.servers(backend: "tcp://h1") }
        #expect(throws: GatewayError.self) { try GatewayConfig.servers(backend: "nats://h1,,h2") }
        #expect(throws: GatewayError.self) { try GatewayConfig.servers(backend: "nats://") }
    }

    /// `--backend @FILE`: the URLs from the file's first line, so that no password is on a
    /// command line; a file that cannot be read, or is empty, is named in the error.
    @Test func aBackendFromAFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-url-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "nats://gateway:s3cret@h1:4222,nats://gateway:s3cret@h2:4222\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try GatewayConfig.backendValue("@" + path) == "nats://gateway:s3cret@h1:4222,nats://gateway:s3cret@h2:4222")
        #expect(try GatewayConfig.backendValue("nats://h1") == "nats://h1")
        let missing = #expect(throws: GatewayError.self) { try GatewayConfig.backendValue("@" + path + ".none") }
        #expect(missing.map { "\($0)".contains(path + ".none") } == true, "\(String(describing: missing))")
        try "\n".write(toFile: path, atomically: true, encoding: .utf8)
        let empty = #expect(throws: GatewayError.self) { try GatewayConfig.backendValue("@" + path) }
        #expect(empty.map { "\($0)".contains("is empty") } == true)
    }

    @Test func replicasDefaultToThreeWithThreeServers() {
        #expect(GatewayConfig(servers: ["nats://a:1", "nats://b:1", "nats://c:1"]).replicas == 3)
        #expect(GatewayConfig(servers: ["nats://a:1"]).replicas == 1)
        #expect(GatewayConfig(servers: ["nats://a:1"], replicas: 3).replicas == 3)
        #expect(GatewayConfig(servers: ["nats://a:1"], pipeline: ["p"]).stages == ["in", "p", "out", "diag"])
    }
}
