import Testing
@testable import EventBusCore

@Suite struct ZeroedBytesTests {
    /// Every count up to past the page: the count asked for, all zeros, and writing one array
    /// never shows in the next (each is a copy, not the page).
    @Test func arraysHaveTheirCountAndStartAsZeros() {
        for count in [0, 1, 7, 8, 255, 256, ZeroedBytes.pageSize - 1, ZeroedBytes.pageSize, ZeroedBytes.pageSize + 1, 3 * ZeroedBytes.pageSize] {
            var bytes = ZeroedBytes.array(count: count)
            #expect(bytes.count == count)
            #expect(bytes.allSatisfy { $0 == 0 }, "count \(count)")
            for index in bytes.indices { bytes[index] = 0xFF }
            let next = ZeroedBytes.array(count: count)
            #expect(next.allSatisfy { $0 == 0 }, "count \(count) after writing the one before")
        }
    }

    @Test func writingFillsTheBytesGiven() {
        for count in [1, 100, ZeroedBytes.pageSize, ZeroedBytes.pageSize + 3] {
            let bytes = ZeroedBytes.array(count: count) { buffer in
                #expect(buffer.count == count)
                for index in buffer.indices { buffer[index] = UInt8(truncatingIfNeeded: index * 7) }
            }
            #expect(bytes == (0..<count).map { UInt8(truncatingIfNeeded: $0 * 7) })
        }
        var emptyGiven = false
        #expect(ZeroedBytes.array(count: 0) { emptyGiven = $0.isEmpty } == [])
        #expect(emptyGiven)
    }

    /// Its users: a topic made from bytes, and a writer that grows past the page.
    @Test func topicsAndWritersMadeOnItAreExact() {
        let topic = Topic.make(stage: Array("out".utf8), subject: Array("messaging:general".utf8)[...], type: Array("message.read".utf8)[...])
        #expect(topic == Array("out/messaging:general/message.read".utf8))
        #expect(Topic.make(stage: [], subject: [], type: []) == Array("//".utf8))
        var writer = JSONWriter(capacity: 16)
        let long = String(repeating: "ab", count: ZeroedBytes.pageSize)
        writer.beginObject(); writer.key("k"); writer.string(long); writer.endObject()
        #expect(writer.takeBytes() == Array("{\"k\":\"\(long)\"}".utf8))
    }
}
