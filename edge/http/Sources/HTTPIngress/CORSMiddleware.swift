import Hummingbird

/// Applies a ``CORSPolicy``: answers a browser's preflight (`OPTIONS` with
/// `Access-Control-Request-Method`) with `204`, and adds the allowed origin to every other
/// answer, the stream's included. A request from an origin not allowed goes through unchanged.
struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    let policy: CORSPolicy

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let origin = request.headers[.origin]
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var response = Response(status: .noContent)
            response.headers.append(contentsOf: policy.headers(origin: origin, preflight: true))
            return response
        }
        var response = try await next(request, context)
        response.headers.append(contentsOf: policy.headers(origin: origin, preflight: false))
        return response
    }
}
