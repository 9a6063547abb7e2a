/// How a sequence of ids read back differs from the one expected, named: where the two
/// first part, what each holds around there, and what kind of difference it is, with the
/// totals of missing, repeated and unexpected ids. For the campaign's `out` check, whose
/// bare `==` said only that 20,000 ids differed somewhere.
struct SequenceDifference: CustomStringConvertible {
    enum Kind: String {
        /// The id expected at the first difference was read earlier already.
        case duplicate
        /// The id expected there is missing from what was read.
        case gap
        /// The id expected there was read, but later: something later came first.
        case reorder
        /// What was read there is no expected id at all.
        case unexpected
        /// One is a prefix of the other.
        case truncated
    }

    let index: Int
    let kind: Kind
    let expectedAround: ArraySlice<String>
    let actualAround: ArraySlice<String>
    let expectedCount: Int
    let actualCount: Int
    /// Expected ids never read.
    let missing: [String]
    /// Ids read more than once.
    let repeated: [String]
    /// Ids read that were not expected.
    let unexpected: [String]

    /// nil when the two are equal.
    init?(expected: [String], actual: [String], context: Int = 4) {
        guard expected != actual else { return nil }
        let index = Array(zip(expected, actual)).firstIndex { $0.0 != $0.1 } ?? min(expected.count, actual.count)
        self.index = index
        expectedCount = expected.count
        actualCount = actual.count
        expectedAround = expected[max(0, index - context)..<min(expected.count, index + context + 1)]
        actualAround = actual[max(0, index - context)..<min(actual.count, index + context + 1)]
        let expectedSet = Set(expected)
        var seen: Set<String> = [], repeated: [String] = [], unexpected: [String] = []
        for id in actual {
            if !seen.insert(id).inserted { repeated.append(id) }
            if !expectedSet.contains(id) { unexpected.append(id) }
        }
        self.repeated = repeated
        self.unexpected = unexpected
        missing = expected.filter { !seen.contains($0) }
        if index == expected.count || index == actual.count {
            kind = .truncated
        } else if actual[..<index].contains(actual[index]) {
            kind = .duplicate
        } else if !expectedSet.contains(actual[index]) {
            kind = .unexpected
        } else if !seen.contains(expected[index]) {
            kind = .gap
        } else {
            kind = .reorder
        }
    }

    var description: String {
        """
        first difference at index \(index) (\(kind.rawValue)); \(actualCount) read, \(expectedCount) expected; \
        \(missing.count) missing (first \(missing.prefix(5))), \(repeated.count) repeated (first \(repeated.prefix(5))), \
        \(unexpected.count) unexpected (first \(unexpected.prefix(5))); \
        expected around it \(Array(expectedAround)), read \(Array(actualAround))
        """
    }
}
