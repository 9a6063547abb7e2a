import Testing
@testable import EventBus
@testable import EventBusCore

/// The scan of a top-level member's object in the same pass (`scan(_:members:nested:of:)`) against
/// two scans: the top level as `scan(_:members:)` finds it, and that member's value scanned on its own.
private func expectNestedAgreement(
    _ bytes: [UInt8], keys names: [String], parent: Int, nested nestedNames: [String],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let keys = JSONScanner.Keys(names)
    let nestedKeys = JSONScanner.Keys(nestedNames)
    bytes.withUnsafeBytes { buffer in
        let plain = Result { () throws(JSONError) in try JSONScanner.scan(buffer, members: keys) }
        let both = Result { () throws(JSONError) -> (members: JSONScanner.Members, nested: JSONScanner.Members) in
            var members = JSONScanner.Members(root: .null), nested = JSONScanner.Members(root: .null)
            try JSONScanner.scan(buffer, members: keys, into: &members, nested: nestedKeys, of: parent, into: &nested)
            return (members, nested)
        }
        switch (plain, both) {
        case (.failure(let expected), .failure(let actual)):
            #expect(actual == expected, sourceLocation: sourceLocation)
        case (.success(let members), .success(let found)):
            #expect(found.members == members, sourceLocation: sourceLocation)
            guard let span = members[parent], span.kind == .object else {
                #expect(found.nested == JSONScanner.Members(root: .null), sourceLocation: sourceLocation)
                return
            }
            // The member's object on its own: the same spans, shifted by where it starts.
            let object = UnsafeRawBufferPointer(rebasing: buffer[span.range])
            guard let alone = try? JSONScanner.scan(object, members: nestedKeys) else {
                Issue.record("the nested object alone does not scan", sourceLocation: sourceLocation)
                return
            }
            #expect(found.nested.root == .object, sourceLocation: sourceLocation)
            for position in nestedNames.indices {
                let start = span.range.lowerBound
                let shifted = alone[position].map { inner in
                    JSONScanner.Span(
                        kind: inner.kind, range: (inner.range.lowerBound + start)..<(inner.range.upperBound + start),
                        hasEscapes: inner.hasEscapes)
                }
                #expect(found.nested[position] == shifted, "\(nestedNames[position])", sourceLocation: sourceLocation)
            }
        default:
            Issue.record("plain \(plain), nested \(both) on \(String(decoding: bytes, as: UTF8.self))",
                         sourceLocation: sourceLocation)
        }
    }
}

/// The one-pass scan of `bytes`, or `nil` if it fails.
private func scanBoth(_ bytes: [UInt8], keys: [String], nested: [String], of parent: Int)
    -> (members: JSONScanner.Members, nested: JSONScanner.Members)?
{
    bytes.withUnsafeBytes { buffer in
        var members = JSONScanner.Members(root: .null), found = JSONScanner.Members(root: .null)
        do {
            try JSONScanner.scan(buffer, members: JSONScanner.Keys(keys), into: &members, nested: JSONScanner.Keys(nested),
                                 of: parent, into: &found)
        } catch {
            return nil
        }
        return (members, found)
    }
}

@Suite struct JSONScannerNestedTests {
    static let envelope = ["specversion", "id", "type", "data"]
    static let data = ["cid", "user_id", "message_id", "read_at"]

    @Test func findsTheMembersOfDataInTheEnvelopesPass() throws {
        let text = #"{"specversion":"1.0","id":"a-1","type":"message.read","data":{"cid":"messaging:general","user_id":"u\u0031","x":{"cid":"deeper"},"message_id":"m1"}}"#
        let bytes = Array(text.utf8)
        let found = try #require(scanBoth(bytes, keys: Self.envelope, nested: Self.data, of: 3))
        #expect(found.nested.root == .object)
        let string = { (span: JSONScanner.Span?) in bytes.withUnsafeBytes { JSONScanner.string(span!, in: $0) } }
        #expect(string(found.nested[0]) == "messaging:general")  // data's own cid, not the deeper one
        #expect(string(found.nested[1]) == "u1")
        #expect(found.nested[1]?.hasEscapes == true)
        #expect(string(found.nested[2]) == "m1")
        #expect(found.nested[3] == nil)
        #expect(string(found.members[2]) == "message.read")
    }

    @Test func findsNothingNestedWhenTheMemberIsAbsentOrNotAnObject() {
        for text in [
            #"{"id":"a","data":[{"cid":"x"}]}"#, #"{"id":"a","data":"{\"cid\":1}"}"#, #"{"id":"a"}"#,
            #"{"id":"a","other":{"cid":"x"}}"#, #"[{"data":{"cid":"x"}}]"#, #"{"data":null}"#, #"{"data": {}}"#,
            #"{"data" : { "cid" : "x" , "user_id" : 3 } , "id":"z"}"#,
        ] {
            expectNestedAgreement(Array(text.utf8), keys: Self.envelope, parent: 3, nested: Self.data)
        }
    }

    @Test func agreesWhenMoreThan64KeysAreOpenAtOnce() {
        // The key stack overflows its stack buffer and the scan runs again with a heap one.
        let deep = JSONScannerTests.keysOpenAtOnce(levels: 10)
        for text in [
            "{\"id\":\"z\",\"data\":{\"deep\":\(deep),\"cid\":\"x\",\"user_id\":\"u\"}}",
            "{\"id\":\"z\",\"data\":{\"deep\":\(deep),\"cid\":\"x\",\"cid\":\"y\"}}",
            "{\"id\":\"z\",\"data\":{\"cid\":\"x\",\"deep\":\(deep.dropLast())}}",
        ] {
            expectNestedAgreement(Array(text.utf8), keys: Self.envelope, parent: 3, nested: Self.data)
        }
        let found = scanBoth(Array("{\"id\":\"z\",\"data\":{\"deep\":\(deep),\"cid\":\"x\"}}".utf8), keys: Self.envelope, nested: Self.data, of: 3)
        #expect(found?.nested[0]?.kind == .string)
    }

    @Test func failsExactlyAsThePlainScanDoes() {
        for text in [
            #"{"data":{"cid":"x","cid":"y"}}"#, #"{"data":{"cid":"x"},"data":{}}"#, #"{"data":{"cid":"x""#,
            #"{"data":{"cid":"\ud800"}}"#, #"{"data":{"cid":x}}"#, #"{"data":{"a":{"b":1,"b":2}}}"#,
        ] {
            expectNestedAgreement(Array(text.utf8), keys: Self.envelope, parent: 3, nested: Self.data)
        }
    }

    @Test(arguments: [21 as UInt64, 22, 23])
    func agreesWithTwoScansOnRandomAndMutatedDocuments(seed: UInt64) {
        var generator = DocumentGenerator(random: SplitMix64(seed: seed))
        var captured = 0
        for _ in 0..<1_500 {
            // An object whose member "n" is an object most of the time, with keys the generator also uses.
            let inner = generator.value(depth: 1)
            let members = [#""k1":"# + generator.value(depth: 1), #""n":"# + (generator.chance(70) ? "{" + #""k2":1,"k3":"#
                + generator.value(depth: 2) + "," + #""k\#(generator.random.next() % 40)":"# + inner + "}" : inner)]
            let document = Array(("{" + (generator.chance(50) ? members : members.reversed()).joined(separator: ",") + "}").utf8)
            for bytes in [document, generator.mutate(document), generator.mutate(document)] {
                expectNestedAgreement(bytes, keys: ["k1", "n"], parent: 1, nested: ["k1", "k2", "k3", "k7", "absent"])
                if let found = scanBoth(bytes, keys: ["k1", "n"], nested: ["k2"], of: 1), found.nested[0] != nil {
                    captured += 1
                }
            }
        }
        // Of the 4,500 texts, the valid ones whose "n" is an object (about a fifth) had "k2" found in it.
        #expect(captured > 600, "\(captured) nested captures")
    }
}
