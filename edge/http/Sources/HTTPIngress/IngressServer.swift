import EventBus
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging

/// The HTTP side of the ingress (docs/http.md): `POST /v1/events` publishes CloudEvents to
/// stage `in` and answers with their SEQs once the broker has confirmed them durable;
/// `POST /v1/query/{method}` asks the receipts service; `GET /v1/stream` streams stage `out`
/// as Server-Sent Events. Errors are problem details.
public struct IngressServer: Sendable {
    let client: BusClient
    let config: IngressConfig
    let logger: Logger
    /// The streams of `GET /v1/stream`.
    public let streams: StreamHub

    public init(client: BusClient, config: IngressConfig, logger: Logger) {
        self.client = client
        self.config = config
        self.logger = logger
        streams = StreamHub(client: client, settings: config.stream, consumerBase: config.streamConsumerBase, logger: logger)
    }

    /// Builds the application; run it with `runService()` or in a service group. With
    /// ``IngressConfig/tls`` it speaks HTTPS only.
    ///
    /// - Parameter onRunning: Called with the bound port once the server listens.
    /// - Throws: ``IngressError`` if the TLS certificate or key cannot be read.
    public func application(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) throws(IngressError) -> some ApplicationProtocol {
        let server: HTTPServerBuilder
        if let tls = config.tls {
            let configuration = try tls.configuration()
            do { server = try .tls(.http1(), tlsConfiguration: configuration) } catch {
                throw IngressError("TLS: \(error)")
            }
        } else {
            server = .http1()
        }
        let router = Router()
        if config.cors.isEnabled { router.middlewares.add(CORSMiddleware(policy: config.cors)) }
        router.get("/health") { _, _ in "ok" }
        router.post("/v1/events") { request, _ in await publish(request) }
        router.post("/v1/query/:method") { request, context in
            await query(request, method: context.parameters.get("method") ?? "")
        }
        router.get("/v1/stream") { request, _ in await stream(request) }
        router.get("/v1/stream/stats") { request, _ in streamStats(request) }
        return Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(config.listen.host, port: config.listen.port), serverName: "eventbus-http"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? config.listen.port) },
            logger: logger)
    }

    /// `POST /v1/events`.
    func publish(_ request: Request) async -> Response {
        do throws(HTTPProblem) {
            try config.access.check(authorization: request.headers[.authorization], for: .publish)
            let body = try await collect(request)
            let events = try CloudEventRequest(
                contentType: request.headers[.contentType],
                headers: request.headers.map { (name: $0.name.canonicalName, value: $0.value) }, body: body)
            let seqs: [UInt64]
            do { seqs = try await client.publish(events.events) } catch { throw HTTPProblem(error) }
            var writer = JSONWriter()
            writer.beginObject()
            writer.key("seqs")
            writer.beginArray()
            for seq in seqs { writer.uint(seq) }
            writer.endArray()
            writer.endObject()
            return Self.json(writer.bytes)
        } catch {
            return answer(error, to: request)
        }
    }

    /// `POST /v1/query/{method}`: the body is the params object (none is `{}`).
    func query(_ request: Request, method: String) async -> Response {
        do throws(HTTPProblem) {
            try config.access.check(authorization: request.headers[.authorization], for: .query)
            let body = try await collect(request)
            let params = body.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
                ? Array("{}".utf8) : try CloudEventRequest.object(body, what: "a query's params (the body)")
            let result: [UInt8]
            do {
                result = try await client.request(service: config.service, method: method, params: String(decoding: params, as: UTF8.self))
            } catch {
                throw HTTPProblem(error)
            }
            return Self.json(result)
        } catch {
            return answer(error, to: request)
        }
    }

    /// `GET /v1/stream`: stage `out` as Server-Sent Events after the client's position, all
    /// of it (or `?prefix=`) for a token of `http_tokens`, one user's part for an app token.
    func stream(_ request: Request) async -> Response {
        do throws(HTTPProblem) {
            let principal = try config.access.check(authorization: request.headers[.authorization], for: .stream)
            let user: String? = if case .user(let user) = principal { user } else { nil }
            let parameters = request.uri.queryParameters
            let scope = try StreamScope(user: user, prefix: parameters.get("prefix"))
            let lastEventID = request.headers.first { $0.name.canonicalName == "last-event-id" }?.value
            let position = try StreamPosition(lastEventID: lastEventID, after: parameters.get("after"))
            let session = try await streams.open(scope: scope, position: position)
            return Response(status: .ok, headers: [.contentType: ServerSentEvent.mediaType, .cacheControl: "no-cache"],
                            body: ResponseBody { writer in try await session.run(&writer) })
        } catch {
            return answer(error, to: request)
        }
    }

    /// `GET /v1/stream/stats`: the streams' counters.
    func streamStats(_ request: Request) -> Response {
        do throws(HTTPProblem) {
            try config.access.check(authorization: request.headers[.authorization], for: .stats)
            return Self.json(streams.counters.json)
        } catch {
            return answer(error, to: request)
        }
    }

    /// The body, at most ``IngressConfig/maxBodyBytes``.
    private func collect(_ request: Request) async throws(HTTPProblem) -> [UInt8] {
        do {
            let buffer = try await request.body.collect(upTo: config.maxBodyBytes)
            return Array(buffer.readableBytesView)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw HTTPProblem(status: 413, code: ErrorCode.tooLarge.wire,
                              detail: "the body is over \(config.maxBodyBytes) bytes, the bus's limit for one batch")
        } catch {
            throw HTTPProblem(status: 400, code: ErrorCode.badJSON.wire, detail: "the body could not be read: \(error)")
        }
    }

    private func answer(_ problem: HTTPProblem, to request: Request) -> Response {
        let level: Logger.Level = problem.status >= 500 ? .warning : .debug
        logger.log(level: level, "request refused", metadata: [
            "http.path": "\(request.uri.path)", "http.status": "\(problem.status)", "bus.code": "\(problem.code)",
        ])
        var headers: HTTPFields = [.contentType: HTTPProblem.mediaType]
        if let seconds = problem.retryAfter { headers[.retryAfter] = String(seconds) }
        if problem.status == 401 { headers[.wwwAuthenticate] = "Bearer realm=\"eventbus\"" }
        return Response(status: .init(code: problem.status), headers: headers,
                        body: .init(byteBuffer: ByteBuffer(bytes: problem.json)))
    }

    private static func json(_ bytes: [UInt8]) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
