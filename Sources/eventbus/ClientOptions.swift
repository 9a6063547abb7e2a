import ArgumentParser
import EventBus
import Logging

/// The flags of every command that talks to a running broker.
struct ClientOptions: ParsableArguments {
    @Option(name: .customLong("command"), help: ArgumentHelp("The broker's command endpoint.", valueName: "EP"))
    var commandEndpoint: String = WireProtocol.defaultCommandEndpoint

    @Option(help: ArgumentHelp("Seconds to wait for the broker before giving up.", valueName: "SECONDS"))
    var timeout: Double = 5

    @Option(help: "Log level on stderr (trace, debug, info, notice, warning, error, critical).")
    var logLevel: Logger.Level = .warning

    @Option(help: ArgumentHelp(
        "This client's CURVE secret key file (mode 0600), for a broker with keys; or set EVENTBUS_SECRET_KEY[_FILE].",
        valueName: "FILE"))
    var secretKeyFile: String?

    @Option(help: ArgumentHelp("The broker's CURVE public key file; or set EVENTBUS_SERVER_KEY[_FILE].", valueName: "FILE"))
    var serverKeyFile: String?

    func validate() throws {
        if (secretKeyFile == nil) != (serverKeyFile == nil) {
            throw ValidationError("--secret-key-file and --server-key-file go together")
        }
        guard timeout > 0, timeout <= 3_600 else { throw ValidationError("--timeout must be between 0 and 3600 seconds") }
    }

    /// A logger to stderr at `--log-level`.
    func logger() -> Logger { CLILogging.logger("eventbus.cli", level: logLevel) }

    /// The CURVE keys of `--secret-key-file`/`--server-key-file`, else of the environment, else `nil`.
    func curveKeys() throws -> CurveClientKeys? {
        do {
            if let secretKeyFile, let serverKeyFile {
                return try CurveClientKeys(secretKeyFile: secretKeyFile, serverKeyFile: serverKeyFile)
            }
            return try CurveClientKeys.fromEnvironment()
        } catch {
            throw Output.fail(error.description)
        }
    }

    /// A client of the broker at `--command`; calls fail after `--timeout` (plus `extra`).
    /// Its PUBs are ordered (docs/protocol.md, "Ordered publishing"): the CLI publishes one
    /// stream of events, in the order given.
    func client(extra: Duration = .zero) throws -> BusClient {
        var options = BusClientOptions(
            endpoint: commandEndpoint, name: "eventbus-cli",
            requestTimeout: .milliseconds(Int(timeout * 1_000)) + extra, curve: try curveKeys())
        options.ordered = true
        do {
            return try BusClient(options: options, logger: logger())
        } catch {
            throw Output.fail("cannot connect to \(commandEndpoint): \(error)")
        }
    }

    /// A client that has checked with `PING` that a broker answers at `--command`.
    func connectedClient(extra: Duration = .zero) async throws -> BusClient {
        if extra != .zero {
            // Probe with the short timeout, so that a missing broker is reported quickly.
            let probe = try client()
            defer { probe.close() }
            try await ping(probe)
        }
        let client = try client(extra: extra)
        if extra == .zero { try await ping(client) }
        return client
    }

    private func ping(_ client: BusClient) async throws {
        do {
            try await client.ping()
        } catch {
            client.close()
            throw Output.fail(error, commandEndpoint: commandEndpoint, usesKeys: client.options.curve != nil)
        }
    }
}
