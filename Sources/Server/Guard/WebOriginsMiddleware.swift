import HTTPTypes
import Hummingbird

/// CORS for the declared apps' web pages served from other origins (`web-origin` in the apps
/// file): a page from one of `origins` may read `/api/config` (the VAPID key) and call the device
/// endpoints (register a Web Push subscription, read and change its preferences); a preflight from
/// it is answered here. Any other origin gets no CORS headers, so a browser keeps its page out.
package struct WebOriginsMiddleware<Context: RequestContext>: RouterMiddleware {
    let origins: Set<String>

    package init(origins: Set<String>) {
        self.origins = origins
    }

    /// The paths a declared web app may call across origins.
    static func isShared(_ path: String) -> Bool {
        path == "/api/config" || path == "/api/devices" || path.hasPrefix("/api/devices/")
    }

    package func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard Self.isShared(request.uri.path) else { return try await next(request, context) }
        // The answer depends on the Origin: a cache must not give one origin's to another.
        guard let origin = request.headers[.origin], origins.contains(origin) else {
            var response = try await next(request, context)
            response.headers[.vary] = "Origin"
            return response
        }
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers: HTTPFields = [
                .accessControlAllowOrigin: origin, .accessControlAllowMethods: "GET, POST, PUT",
                .accessControlAllowHeaders: "Authorization, Content-Type", .accessControlMaxAge: "86400",
                .vary: "Origin",
            ]
            for field in HardeningMiddleware<Context>.securityHeaders { headers.append(field) }
            return Response(status: .noContent, headers: headers)
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound && error.body == nil {
            // No such route: the hardening layer answers it (405 with Allow where the path exists).
            throw error
        } catch let error as any HTTPResponseError {
            // An error the page should read (a refused registration names its field).
            response = try error.response(from: request, context: context)
        }
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.vary] = "Origin"
        return response
    }
}
