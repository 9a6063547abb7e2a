import EventBus
import EventBusTesting
import Foundation

/// One HTTP request sent with curl (a real HTTP client, as docs/http.md's examples use),
/// and its answer.
struct HTTPExchange: Sendable {
    /// The status code.
    let status: Int
    /// The headers, names in lower case.
    let headers: [String: String]
    /// The body.
    let body: [UInt8]

    /// The body as text.
    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as JSON.
    func json() throws -> JSONValue { try JSONParser.parse(body) }

    /// The `code` of a problem body, if it is one.
    var code: String? { headers["content-type"] == "application/problem+json" ? (try? json())?["code"]?.stringValue : nil }

    /// Sends `method` to `url` with `headers` and `body`; a `stream` answer is read for 2 s.
    static func send(_ url: String, method: String = "POST", headers: [String: String] = [:], body: [UInt8] = [],
                     stream: Bool = false) async throws -> HTTPExchange {
        let directory = try TemporaryDirectory.create("eventbus-http-call")
        defer { try? FileManager.default.removeItem(at: directory) }
        let bodyFile = directory.appendingPathComponent("body")
        try Data(body).write(to: bodyFile)
        var arguments = ["-s", "-S", "-i", "-X", method, url, "--max-time", stream ? "2" : "60", "-H", "Expect:"] + (stream ? ["-N"] : [])
        // curl adds a form Content-Type to a POST body; an explicit empty header sends none.
        if headers["Content-Type"] == nil { arguments += ["-H", "Content-Type:"] }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { arguments += ["-H", "\(name): \(value)"] }
        if method != "GET" { arguments += ["--data-binary", "@" + bodyFile.path] }
        let result = try await RunningProcess.run("/usr/bin/curl", arguments)
        // curl's exit 28: its --max-time ended a stream that would go on.
        guard result.status == 0 || (stream && result.status == 28) else { throw ProcessError("curl \(method) \(url) failed (\(result.status)): \(result.standardError)") }
        return try parse(result.standardOutput)
    }

    /// Reads `curl -i`'s output: the status line, headers, a blank line, the body.
    static func parse(_ output: String) throws -> HTTPExchange {
        guard let split = output.range(of: "\r\n\r\n") else { throw ProcessError("no header end in \(output)") }
        let lines = output[..<split.lowerBound].components(separatedBy: "\r\n")
        guard let statusLine = lines.first, let status = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw ProcessError("no status line in \(output)")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return HTTPExchange(status: status, headers: headers, body: Array(output[split.upperBound...].utf8))
    }
}
