import Foundation

/// The fenced code blocks of a document of the repository, for the tests that run the
/// docs' samples (the root's and examples/chat-backend's).
public enum MarkdownBlocks {
    /// The blocks of `language` in `document` (a path from the repository root).
    public static func blocks(_ language: String, in document: String) throws -> [String] {
        let text = try String(contentsOf: BuildFolder.root.appendingPathComponent(document), encoding: .utf8)
        var blocks: [String] = [], current: [String]?
        for line in text.components(separatedBy: "\n") {
            // A block inside a quote (`> ```sh`) counts as well.
            let code = line.hasPrefix("> ") ? String(line.dropFirst(2)) : line
            if current == nil, code == "```\(language)" {
                current = []
            } else if let block = current, code == "```" {
                blocks.append(block.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(code)
            }
        }
        return blocks
    }

    /// `text` without blank lines or the indentation of its lines.
    public static func normalized(_ text: String) -> String {
        text.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "\n")
    }
}
