import EventBus
import Foundation
import Hummingbird
import Logging

/// A small chat backend that publishes its users' actions to the event bus.
///
/// Each mutating endpoint publishes the ingress event (docs/events.md) on stage `in`, waits
/// for the broker's confirm and only then answers with the confirmed `seq`; the read
/// endpoints ask the `receipts` service. A bus that is down or slow is answered
/// `503` after the client's request timeout, never a hang.
///
/// ```swift
/// let bus = try BusClient(options: .init(endpoint: "tcp://127.0.0.1:7750", requestTimeout: .seconds(2)))
/// let backend = ChatBackend(bus: bus)
/// let app = backend.application(host: "127.0.0.1", port: 8080)
/// try await app.runService()
/// ```
public struct ChatBackend: Sendable {
    /// The connection to the broker; its `requestTimeout` bounds every bus call.
    public let bus: BusClient
    /// The `source` of every event this backend publishes.
    public let source: String
    let store = MessageStore()
    let logger: Logger

    /// Creates the backend.
    ///
    /// - Parameters:
    ///   - bus: The broker connection.
    ///   - source: The events' `source`; with their ids it is the deduplication key.
    ///   - logger: Where requests that fail on the bus are logged.
    public init(bus: BusClient, source: String = "/chat-backend", logger: Logger = Logger(label: "chat-backend")) {
        self.bus = bus
        self.source = source
        self.logger = logger
    }

    /// The router with every endpoint of the API and the CORS middleware.
    public func router() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.middlewares.add(CORSMiddleware())
        addChannelRoutes(to: router)
        addMessageRoutes(to: router)
        addReceiptRoutes(to: router)
        addQueryRoutes(to: router)
        router.get("/health") { _, _ in try await self.health() }
        return router
    }

    /// An application serving ``router()`` on `host:port` (port 0 picks a free one).
    ///
    /// - Parameters:
    ///   - host: The address to bind, such as `127.0.0.1`.
    ///   - port: The port; 0 for an ephemeral one.
    ///   - onServerRunning: Called with the bound port once the server listens.
    public func application(
        host: String, port: Int, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router(),
            configuration: .init(address: .hostname(host, port: port), serverName: "chat-backend"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
            logger: logger)
    }

    // MARK: The bus

    /// Publishes one ingress event and waits for its confirm.
    ///
    /// - Parameters:
    ///   - type: The event type.
    ///   - subject: The cid, or `@user` for `user.updated`.
    ///   - data: The payload.
    ///   - id: The event id: derived from the caller's idempotency key or own ids, so a retry is deduplicated.
    /// - Returns: The confirmed SEQ.
    func publish(type: String, subject: String, data: some Encodable & Sendable, id: String) async throws(APIError) -> UInt64 {
        let event = IngressEvent(id: id, source: source, type: type, subject: subject, time: Date().busTimestamp, data: data)
        let bytes: [UInt8]
        do {
            bytes = try event.json()
        } catch {
            throw APIError(.internalServerError, "cannot encode \(type): \(error)")
        }
        do {
            return try await bus.publish(bytes, stage: "in")
        } catch {
            logger.warning("publish failed", metadata: ["bus.type": "\(type)", "event.id": "\(id)", "error.type": "\(error.code.wire)"])
            throw APIError.bus(error)
        }
    }

    /// Asks the `receipts` service and returns its reply as it is.
    func query(_ method: String, params: some Encodable) async throws -> Response {
        let json = String(decoding: try JSONResponse.encoder.encode(params), as: UTF8.self)
        do {
            return JSONResponse.raw(try await bus.request(service: "receipts", method: method, params: json))
        } catch {
            logger.info("query failed", metadata: ["bus.method": "\(method)", "error.type": "\(error.code.wire)"])
            throw APIError.bus(error)
        }
    }

    /// `GET /health`: whether the broker answers a `PING`.
    func health() async throws -> Response {
        do {
            try await bus.ping()
            return try JSONResponse.make(["bus": "up"])
        } catch {
            return try JSONResponse.make(["bus": "down"], status: .serviceUnavailable)
        }
    }

    // MARK: Requests

    /// The event id for an event of `type`: from the `Idempotency-Key` header when the
    /// client sent one (so its retry is deduplicated by the broker), else a fresh UUID.
    static func eventID(_ type: String, key: String?) -> String {
        key.map { "\(type):\($0)" } ?? UUID().uuidString.lowercased()
    }

    /// The event id for an event of `type` about the backend's own record `parts` (a cid
    /// and a message id): the same record always gives the same id, so a retry is
    /// deduplicated. Readable when it fits the 128 characters of an id, else hashed.
    static func eventID(_ type: String, naming parts: String...) -> String {
        let readable = "\(type):" + parts.joined(separator: "/")
        if readable.utf8.count <= 128 { return readable }
        // FNV-1a, 64 bits: stable across runs and machines (unlike Hasher).
        let hash = parts.joined(separator: "/").utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        return "\(type):\(String(hash, radix: 16))"
    }

    /// The `Idempotency-Key` header, checked: 1-100 characters of `[A-Za-z0-9_!.@-]`.
    static func idempotencyKey(_ request: Request) throws(APIError) -> String? {
        guard let key = request.headers.first(where: { $0.name.canonicalName == "idempotency-key" })?.value else { return nil }
        guard (1...100).contains(key.utf8.count), Identifier.isValidMessageID(key) else {
            throw .badField("Idempotency-Key", "must be 1-100 characters of [A-Za-z0-9_!.@-], such as a UUID")
        }
        return key
    }

    /// The request's JSON body as `Body`; a missing or mistyped field is a 400 naming it.
    static func decode<Body: Decodable>(_: Body.Type, from request: Request) async throws -> Body {
        var request = request
        let buffer = try await request.collectBody(upTo: 1 << 20)
        do {
            return try JSONDecoder().decode(Body.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw APIError(decoding: error)
        }
    }

    /// The path parameter `name`, percent-decoded.
    static func parameter(_ name: String, _ context: BasicRequestContext) throws -> String {
        let raw = try context.parameters.require(name)
        return raw.removingPercentEncoding ?? raw
    }
}

extension APIError {
    /// A 400 naming the field a JSON body got wrong.
    init(decoding error: DecodingError) {
        func path(_ keys: [any CodingKey]) -> String {
            keys.reduce("") { path, key in
                if let index = key.intValue { return path + "[\(index)]" }
                return path.isEmpty ? key.stringValue : path + "." + key.stringValue
            }
        }
        switch error {
        case .keyNotFound(let key, let context):
            self = .badField(path(context.codingPath + [key]), "required")
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            self = .badField(context.codingPath.isEmpty ? "body" : path(context.codingPath), "must be \(type == String.self ? "a string" : type == Bool.self ? "a boolean" : "of type \(type)")")
        case .dataCorrupted(let context):
            self = .badField(context.codingPath.isEmpty ? "body" : path(context.codingPath), "must be a JSON object")
        @unknown default:
            self = .badField("body", "cannot be read: \(error)")
        }
    }
}
