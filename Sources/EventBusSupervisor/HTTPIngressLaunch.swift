import Foundation

/// The HTTP ingress that `eventbus up --http ADDR` runs beside the plugins, supervised like
/// one: `eventbus-http --listen ADDR --command <the bus's command endpoint>`, plus
/// `--security FILE` (its `http_tokens`) and a CURVE key of its own when the bus has keys
/// (docs/http.md).
public struct HTTPIngressLaunch: Sendable, Equatable {
    /// The name it is supervised and logged under.
    public static let name = "eventbus-http"
    /// The variable that names the `eventbus-http` executable, when it is not beside `eventbus`.
    public static let environmentVariable = "EVENTBUS_HTTP"

    /// The `eventbus-http` executable.
    public var executable: String
    /// Where it listens, `HOST:PORT`.
    public var listen: String

    public init(executable: String, listen: String) {
        self.executable = executable
        self.listen = listen
    }

    /// The ingress listening on `listen`, its executable found as ``environmentVariable`` says,
    /// else in `directory` (beside `eventbus`).
    ///
    /// - Throws: ``PipelineError`` naming where it looked and how to build it, when it is not there.
    public static func find(listen: String, in directory: String,
                            environment: [String: String] = ProcessInfo.processInfo.environment) throws(PipelineError) -> HTTPIngressLaunch {
        let path = environment[environmentVariable] ?? directory + "/" + name
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw PipelineError(.pipeline, "--http needs the eventbus-http executable, and there is none at \(path): it is a package of its "
                + "own, build it with `swift build -c release --package-path edge/http` and set \(environmentVariable) to "
                + "edge/http/.build/release/eventbus-http (or copy it beside eventbus); docs/http.md")
        }
        return HTTPIngressLaunch(executable: path, listen: listen)
    }

    /// Its arguments against the bus at `commandEndpoint`, with the tokens of `securityFile`.
    func arguments(commandEndpoint: String, securityFile: String?) -> [String] {
        ["--listen", listen, "--command", commandEndpoint] + (securityFile.map { ["--security", $0] } ?? [])
    }
}
