import Hummingbird
import Storage

/// A request whose writes the database refused for a fault of the machine (a full disk, an I/O
/// error) is answered 503 with `Retry-After` and what is wrong, never 500 and never acknowledged:
/// its transaction was rolled back, so nothing of it was stored and the client may send it again.
/// The refusal is noted in the storage health (`/readyz` says degraded).
struct StorageFaultMiddleware<Context: RequestContext>: RouterMiddleware {
    let health: StorageHealth

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            guard let fault = StorageFault(error) else { throw error }
            health.failed(fault, what: "a request's writes (\(request.method.rawValue) \(request.uri.path))")
            throw HTTPError(
                .serviceUnavailable, headers: [.retryAfter: "30"],
                message: "the server cannot store this now: \(fault); nothing of this request was stored, "
                    + "send it again later")
        }
    }
}
