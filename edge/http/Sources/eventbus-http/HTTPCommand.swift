import ArgumentParser
import EventBus
import EventBusSupervisor
import Foundation
import HTTPIngress
import Hummingbird
import Logging

/// `eventbus-http`: CloudEvents over HTTP into the bus (docs/http.md).
@main
struct HTTPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eventbus-http",
        abstract: "Publish CloudEvents to the bus, query receipts and stream stage out over HTTP (docs/http.md).",
        discussion: """
            POST /v1/events takes a structured CloudEvent, a batch or a binary-mode event and answers with \
            the SEQs once the broker has made them durable; POST /v1/query/{method} asks the receipts service; \
            GET /v1/stream streams stage out as Server-Sent Events, resumable with Last-Event-ID. \
            Prints one line, "eventbus-http listening on http://HOST:PORT", once it listens.
            """)

    @Option(help: ArgumentHelp("Where to listen, HOST:PORT (port 0 picks a free one).", valueName: "HOST:PORT"))
    var listen = "127.0.0.1:8080"

    @Option(name: .customLong("command"), help: ArgumentHelp("The broker's command endpoint.", valueName: "EP"))
    var commandEndpoint: String = WireProtocol.defaultCommandEndpoint

    @Option(help: ArgumentHelp("The security file whose http_tokens (token: role) admit HTTP clients (docs/http.md).", valueName: "FILE"))
    var security: String?

    @Flag(help: "Without tokens, allow listening on an address other than loopback: anyone who reaches it may publish and query.")
    var allowInsecureBind = false

    @Option(help: ArgumentHelp(
        "This client's CURVE secret key file, for a broker with keys; or set EVENTBUS_SECRET_KEY[_FILE].", valueName: "FILE"))
    var secretKeyFile: String?

    @Option(help: ArgumentHelp("The broker's CURVE public key file; or set EVENTBUS_SERVER_KEY[_FILE].", valueName: "FILE"))
    var serverKeyFile: String?

    @Option(help: ArgumentHelp("Seconds between the heartbeat comments of GET /v1/stream.", valueName: "SECONDS"))
    var streamHeartbeat = 15.0

    @Option(help: ArgumentHelp("Messages one stream client's buffer holds; a client that falls further behind is cut.", valueName: "COUNT"))
    var streamBuffer = 1_000

    @Option(help: ArgumentHelp("Seconds a cut stream client has to take its last write and the final cut event before its connection is closed.",
                               valueName: "SECONDS"))
    var streamCutGrace = 5.0

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp(
        "A PEM certificate file (the server's certificate, then any intermediates): serve HTTPS only, with --tls-key.", valueName: "FILE"))
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The PEM private key file of --tls-cert.", valueName: "FILE"))
    var tlsKey: String?

    @Option(name: .customLong("cors-origin"), help: ArgumentHelp(
        "An origin (scheme://host[:port]) whose web pages may call this server from a browser, or * for any; repeat for several.",
        valueName: "ORIGIN"))
    var corsOrigins: [String] = []

    @Option(help: "Log level on stderr (trace, debug, info, notice, warning, error, critical).")
    var logLevel = "info"

    func validate() throws {
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
        if (secretKeyFile == nil) != (serverKeyFile == nil) {
            throw ValidationError("--secret-key-file and --server-key-file go together")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level \(logLevel) is not a level") }
        guard streamHeartbeat >= 0.01, streamHeartbeat <= 3_600 else { throw ValidationError("--stream-heartbeat: from 0.01 to 3600 seconds") }
        guard streamCutGrace >= 0.01, streamCutGrace <= 3_600 else { throw ValidationError("--stream-cut-grace: from 0.01 to 3600 seconds") }
        guard streamBuffer >= 1, streamBuffer <= 1_000_000 else { throw ValidationError("--stream-buffer: from 1 to 1000000 messages") }
    }

    func run() async throws {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var logger = Logger(label: "eventbus-http")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let config: IngressConfig
        let curve: CurveClientKeys?
        do {
            let tokens = try security.map { path throws(PipelineError) in try SecurityConfigFile.httpTokens(path: path) } ?? .none
            let secret = try security.flatMap { path throws(PipelineError) in try SecurityConfigFile.httpJWTSecret(path: path) }
            let entries = try security.map { path throws(PipelineError) in try SecurityConfigFile.httpJWTES256Keys(path: path) } ?? []
            var es256Keys: [AppTokenKey] = []
            for (index, entry) in entries.enumerated() { es256Keys.append(try AppTokenKey(entry, index: index)) }
            let appTokens = secret == nil && es256Keys.isEmpty ? nil : try AppTokenVerifier(hs256Secret: secret, es256Keys: es256Keys)
            var settings = IngressConfig(listen: try ListenAddress(listen), commandEndpoint: commandEndpoint,
                                         access: IngressAccess(tokens: tokens, appTokens: appTokens), allowInsecureBind: allowInsecureBind)
            settings.stream.heartbeat = .milliseconds(Int64((streamHeartbeat * 1_000).rounded()))
            settings.stream.bufferEvents = streamBuffer
            settings.cors = try CORSPolicy(origins: corsOrigins)
            if let tlsCert, let tlsKey {
                settings.tls = TLSFiles(certificate: tlsCert, key: tlsKey)
                _ = try settings.tls?.configuration()  // a bad file stops it here, with the others
            }
            settings.stream.cutGrace = .milliseconds(Int64((streamCutGrace * 1_000).rounded()))
            config = settings
            try config.validate()
            if let secretKeyFile, let serverKeyFile {
                curve = try CurveClientKeys(secretKeyFile: secretKeyFile, serverKeyFile: serverKeyFile)
            } else {
                curve = try CurveClientKeys.fromEnvironment()
            }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(64)
        }
        let client = try BusClient(options: .init(endpoint: commandEndpoint, name: "eventbus-http", curve: curve), logger: logger)
        defer { client.close() }
        let listen = config.listen
        let server = IngressServer(client: client, config: config, logger: logger)
        let scheme = config.tls == nil ? "http" : "https"
        let application = try server.application { port in
            // The ready line, on stdout: tests and `eventbus up --http` read the port from it.
            let host = ListenAddress.display(listen.host)
            FileHandle.standardOutput.write(Data("eventbus-http listening on \(scheme)://\(host):\(port) (bus \(commandEndpoint))\n".utf8))
        }
        logger.info("starting", metadata: ["http.listen": "\(listen)", "bus.command": "\(commandEndpoint)",
                                           "http.tokens": "\(config.access.tokens.roles.count)",
                                           "http.app_tokens": "\(config.access.appTokens?.algorithms.joined(separator: ",") ?? "none")",
                                           "http.tls": "\(config.tls != nil)"])
        try await application.runService()
    }
}
