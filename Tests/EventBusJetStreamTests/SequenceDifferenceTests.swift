import Testing

/// The campaign's diff of `out` against the fold names each kind of difference.
@Suite struct SequenceDifferenceTests {
    let expected = ["a", "b", "c", "d", "e"]

    @Test func equalSequencesHaveNoDifference() {
        #expect(SequenceDifference(expected: expected, actual: expected) == nil)
    }

    @Test func aRepeatIsADuplicate() throws {
        let difference = try #require(SequenceDifference(expected: expected, actual: ["a", "b", "b", "c", "d", "e"]))
        #expect(difference.index == 2)
        #expect(difference.kind == .duplicate)
        #expect(difference.repeated == ["b"])
        #expect(difference.missing.isEmpty)
    }

    @Test func aMissingIdIsAGap() throws {
        let difference = try #require(SequenceDifference(expected: expected, actual: ["a", "b", "d", "e"]))
        #expect(difference.index == 2)
        #expect(difference.kind == .gap)
        #expect(difference.missing == ["c"])
        #expect(difference.description.contains("first difference at index 2 (gap)"))
    }

    @Test func aLaterIdFirstIsAReorder() throws {
        let difference = try #require(SequenceDifference(expected: expected, actual: ["a", "c", "b", "d", "e"]))
        #expect(difference.index == 1)
        #expect(difference.kind == .reorder)
        #expect(difference.missing.isEmpty && difference.repeated.isEmpty)
    }

    @Test func anIdNotExpectedAndAShortReadAreNamed() throws {
        #expect(SequenceDifference(expected: expected, actual: ["a", "x", "c", "d", "e"])?.kind == .unexpected)
        let short = try #require(SequenceDifference(expected: expected, actual: ["a", "b"]))
        #expect(short.kind == .truncated)
        #expect(short.index == 2)
        #expect(short.missing == ["c", "d", "e"])
    }
}
