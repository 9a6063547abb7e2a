import ArgumentParser
import ChatGateway
import EventBus
import EventBusSupervisor
import Foundation
import Hummingbird
import Logging

/// `chat-gateway`: pushes the bus's `out` events to websocket clients and serves the browser demo.
@main
struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat-gateway",
        abstract: "Websocket gateway: pushes the bus's out events to the users they concern.")

    @Option(help: "HTTP address to listen on, HOST:PORT (port 0 picks a free one).")
    var http = "127.0.0.1:8090"

    @Option(name: .customLong("command"), help: "The broker's command endpoint.")
    var commandEndpoint = WireProtocol.defaultCommandEndpoint

    @Option(help: "The durable consumer name.")
    var consumer = "chat-gateway"

    @Option(help: "The folder of the browser demo served at /.")
    var publicDir: String?

    @Option(help: "The most frames waiting for one websocket before it is closed (code 4008).")
    var queueLimit = 1024

    @Option(help: ArgumentHelp("The base URL of eventbus-http as the browser reaches it: the demo page follows its user's stream there.",
                               valueName: "URL"))
    var streamURL: String?

    @Option(help: ArgumentHelp("The security file whose http_jwt_hs256_secret signs the demo users' app tokens (with --stream-url).",
                               valueName: "FILE"))
    var security: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel = "info"

    func run() async throws {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var logger = Logger(label: "chat-gateway")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        guard let colon = http.lastIndex(of: ":"), let port = Int(http[http.index(after: colon)...]) else {
            throw ValidationError("--http must be HOST:PORT")
        }
        let host = String(http[..<colon])
        var session: DemoSession?
        if let streamURL {
            guard let security, let secret = try SecurityConfigFile.httpJWTSecret(path: security) else {
                throw ValidationError("--stream-url needs --security FILE with an http_jwt_hs256_secret, to sign the users' app tokens")
            }
            session = DemoSession(streamURL: streamURL, issuer: AppTokenIssuer(secret: secret))
        }
        let client = try BusClient(options: .init(endpoint: commandEndpoint, name: consumer), logger: logger)
        let gateway = Gateway(
            client: client,
            config: GatewayConfig(consumer: consumer, queueCapacity: queueLimit),
            logger: logger)
        let app = GatewayServer.application(
            gateway: gateway, host: host, port: port, publicDirectory: publicDir ?? Self.defaultPublicDirectory(),
            session: session,
            onRunning: { bound in
                // The ready line tests and scripts wait for.
                FileHandle.standardOutput.write(Data("chat-gateway listening on http://\(host):\(bound) (bus \(commandEndpoint))\n".utf8))
            },
            logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await gateway.run() }
            group.addTask { try await app.runService() }
            try await group.next()
            group.cancelAll()
        }
        client.close()
    }

    /// `examples/gateway/Public` of the checkout this binary was built from, else `./Public`.
    static func defaultPublicDirectory() -> String {
        let source = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Public").path
        return FileManager.default.fileExists(atPath: source) ? source : "Public"
    }
}
