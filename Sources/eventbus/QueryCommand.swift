import ArgumentParser
import EventBus
import Foundation

/// `eventbus query`: a request to the `receipts` service.
struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Send a query (REQ) to the receipts service and print the reply JSON.")

    @OptionGroup var client: ClientOptions

    @Argument(help: "The method, such as unread_counts.")
    var method: String

    @Argument(help: ArgumentHelp("The params, a JSON object.", valueName: "JSON"))
    var params: String = "{}"

    @Option(help: "The service to ask.")
    var service: String = "receipts"

    func validate() throws {
        guard (try? JSONSerialization.jsonObject(with: Data(params.utf8))) is [String: Any] else {
            throw ValidationError("JSON params must be a JSON object, got: \(params)")
        }
    }

    func run() async throws {
        // The broker answers a REQ within its own timeout (5 s by default): wait that long on top.
        let client = try await client.connectedClient(extra: .seconds(6))
        defer { client.close() }
        do {
            let reply = try await client.request(service: service, method: method, params: params)
            Output.bytes(reply + [0x0A])
        } catch {
            throw Output.fail(error)
        }
    }
}
