import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

/// The gateway's HTTP side: the websocket endpoint `/ws` and the demo's static files at `/`.
public enum GatewayServer {
    /// Builds the application.
    ///
    /// - Parameters:
    ///   - gateway: The gateway whose connections the websockets are.
    ///   - host: The address to listen on.
    ///   - port: The port; 0 picks a free one.
    ///   - publicDirectory: The folder of the browser demo, served at `/`.
    ///   - session: Where the demo page follows its user's events, and their app tokens; nil
    ///     answers `/session` with 404.
    ///   - onRunning: Called with the bound port once the server listens.
    ///   - logger: Where the server logs.
    /// - Returns: The application; run it with `runService()` or in a service group.
    public static func application(
        gateway: Gateway, host: String, port: Int, publicDirectory: String, session: DemoSession? = nil,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in },
        logger: Logger
    ) -> some ApplicationProtocol {
        let router = Router()
        router.middlewares.add(FileMiddleware(publicDirectory, searchForIndexHtml: true, logger: logger))
        router.get("/health") { _, _ in "ok" }
        // The demo's sign-in: any user, no password (put your own session check here).
        router.get("/session") { request, _ -> Response in
            guard let user = request.uri.queryParameters.get("user"), !user.isEmpty, !user.hasPrefix("@"), user.count <= 128 else {
                return Response(status: .badRequest, body: .init(byteBuffer: ByteBuffer(string: "user=ID is required\n")))
            }
            guard let session else {
                return Response(status: .notFound, body: .init(byteBuffer: ByteBuffer(string: "start chat-gateway with --stream-url and --security\n")))
            }
            return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(string: session.json(for: user))))
        }

        let wsRouter = Router(context: BasicWebSocketRequestContext.self)
        wsRouter.ws("/ws") { request, _ in
            guard let user = request.uri.queryParameters.get("user_id"), !user.isEmpty else { return .dontUpgrade }
            if let last = request.uri.queryParameters.get("last_seq"), UInt64(last) == nil { return .dontUpgrade }
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            let user = context.request.uri.queryParameters.get("user_id") ?? ""
            let lastSeq = context.request.uri.queryParameters.get("last_seq").flatMap { UInt64($0) }
            let connection = gateway.connect(userID: user, lastSeq: lastSeq)
            let logger = context.logger
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        for await frame in connection.frames {
                            try await outbound.write(.text(frame))
                        }
                        if connection.overflowed {
                            logger.warning("client too slow; closing", metadata: ["chat.user": "\(user)", "bus.seq": "\(connection.lastSeq)"])
                            try await outbound.close(.unknown(Connection.overflowCloseCode), reason: "too slow: reconnect with last_seq")
                        }
                    } catch {}
                    gateway.disconnect(connection)
                }
                // Nothing is expected from the client; reading notices its close.
                do { for try await _ in inbound {} } catch {}
                gateway.disconnect(connection)
                await group.waitForAll()
            }
        }

        return Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: wsRouter),
            configuration: .init(address: .hostname(host, port: port), serverName: "chat-gateway"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }
}
