import ArgumentParser
import ChatBackend
import EventBus
import Foundation
import Logging

/// `chat-backend`: the example chat backend, an HTTP service that publishes to the bus.
@main
struct ChatBackendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat-backend",
        abstract: "An example chat backend: HTTP in, receipt events out to the event bus.")

    @Option(help: ArgumentHelp("Where to listen, HOST:PORT (port 0 picks a free one).", valueName: "ADDR"))
    var http: String = "127.0.0.1:8080"

    @Option(name: .customLong("command"), help: ArgumentHelp("The broker's command endpoint.", valueName: "EP"))
    var commandEndpoint: String = WireProtocol.defaultCommandEndpoint

    @Option(help: ArgumentHelp("Seconds a bus call may take before the request gets 503.", valueName: "SECONDS"))
    var busTimeout: Double = 2

    @Option(help: "The source of the events it publishes.")
    var source: String = "/chat-backend"

    @Option(help: "Log level on stderr (trace, debug, info, notice, warning, error, critical).")
    var logLevel: String = "info"

    func validate() throws {
        guard address != nil else { throw ValidationError("--http must be HOST:PORT, got \(http)") }
        guard busTimeout > 0, busTimeout <= 600 else { throw ValidationError("--bus-timeout must be between 0 and 600 seconds") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
    }

    /// `--http` split into host and port.
    var address: (host: String, port: Int)? {
        guard let colon = http.lastIndex(of: ":"), let port = Int(http[http.index(after: colon)...]),
              (0...65_535).contains(port) else { return nil }
        return (String(http[..<colon]), port)
    }

    func run() async throws {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var logger = Logger(label: "chat-backend")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let timeout = Duration.milliseconds(Int(busTimeout * 1_000))
        let bus = try BusClient(
            options: .init(endpoint: commandEndpoint, name: "chat-backend", requestTimeout: timeout, resendAfter: min(timeout / 2, .seconds(1))),
            logger: logger)
        defer { bus.close() }
        let backend = ChatBackend(bus: bus, source: source, logger: logger)
        // Safe: validate() checked the address.
        let (host, port) = address!
        let app = backend.application(host: host, port: port) { port in
            // The ready line, unbuffered: scripts and tests read the port from it.
            FileHandle.standardOutput.write(Data("chat-backend listening on http://\(host):\(port) (bus \(commandEndpoint))\n".utf8))
        }
        try await app.runService()
    }
}
