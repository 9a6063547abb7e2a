import EventBusTesting
import Foundation
import Testing

@testable import EventBusBroker

@Suite("OffsetStore")
struct LogOffsetStoreTests {
    @Test func savedOffsetsLoadBackInANewStore() throws {
        try withTemporaryDirectory { dir in
            let store = try OffsetStore(directory: dir, logger: quietLogger)
            let offsets: [String: UInt64] = ["receipt-reducer": 42, "read-privacy": 7, "big": .max]
            try store.save(offsets)
            #expect(store.load() == offsets)
            #expect(try OffsetStore(directory: dir, logger: quietLogger).load() == offsets)
            try store.save(["receipt-reducer": 43])
            #expect(store.load() == ["receipt-reducer": 43])
            #expect(!FileManager.default.fileExists(atPath: dir + "/consumers.json.tmp"))
        }
    }

    @Test func missingFileLoadsAsEmpty() throws {
        try withTemporaryDirectory { dir in
            let store = try OffsetStore(directory: dir + "/not-yet", logger: quietLogger)
            #expect(store.load().isEmpty)
        }
    }

    @Test func corruptFileLoadsAsEmptyAndIsLogged() throws {
        try withTemporaryDirectory { dir in
            try Data("{\"a\": 1,".utf8).write(to: URL(fileURLWithPath: dir + "/consumers.json"))
            let capture = CapturingLogHandler()
            let store = try OffsetStore(directory: dir, logger: .init(label: "test") { _ in capture })
            #expect(store.load().isEmpty)
            #expect(capture.entries.contains { $0.level == .error })
            try store.save(["a": 2])
            #expect(store.load() == ["a": 2])
        }
    }
}
