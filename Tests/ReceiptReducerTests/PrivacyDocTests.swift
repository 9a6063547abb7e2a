import EventBusCore
import ReceiptReducer
import Testing

/// Runs the worked example of `docs/privacy.md` ("What others see, step by
/// step") against the reducer, as ``EventsDocTests`` runs `docs/events.md`'s:
/// each step's outputs and each query reply must be what the page shows. The
/// replies are the reducer's full ones, before any filter: docs/events.md
/// rules 6, 18 and 19 hold in them already.
@Suite struct PrivacyDocTests {
    @Test func workedPrivacyExampleMatchesTheReducer() throws {
        let doc = try EventsDoc.load("privacy.md")
        let example = try WorkedExample(doc)
        try #require(example.steps.count >= 8, "the privacy example has too few steps")
        try #require(example.queries.count >= 3, "the privacy example has too few queries")
        var reducer = ReceiptReducer()
        for step in example.steps {
            example.checkOutputs(of: step, try step.apply(to: &reducer))
            try example.runQueries(after: step.number, on: reducer)
        }
    }

    @Test func everyPrivacyExampleInputValidates() throws {
        for block in try EventsDoc.load("privacy.md").blocks where block.words.contains("input") {
            #expect(throws: Never.self, "docs/privacy.md line \(block.line)") {
                try EventValidator.validate(Array(block.text.utf8), stage: Stage.in)
            }
        }
    }
}
