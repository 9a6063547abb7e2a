import Hummingbird

/// Lets a page served from another origin (the gateway's demo) call the backend.
///
/// Every reply, errors included, carries `Access-Control-Allow-Origin: *`, and any
/// `OPTIONS` request (a browser's preflight) is answered `204` with the methods and
/// headers the API accepts.
struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        if request.method == .options {
            response = Response(status: .noContent)
            response.headers[.accessControlAllowMethods] = "GET, POST, PUT, DELETE, OPTIONS"
            response.headers[.accessControlAllowHeaders] = "Content-Type, Idempotency-Key"
            response.headers[.accessControlMaxAge] = "600"
        } else {
            do {
                response = try await next(request, context)
            } catch let error as any HTTPResponseError {
                response = try error.response(from: request, context: context)
            }
        }
        response.headers[.accessControlAllowOrigin] = "*"
        return response
    }
}
