import Foundation
import HTTPTypes
import Hummingbird

/// What every response carries and every request is checked for, before the routes:
/// - security headers on every response, errors included (`X-Content-Type-Options: nosniff`, a
///   Content-Security-Policy that allows the page's own files only, no framing, no referrer);
/// - a path with a NUL or another control character, raw or percent-encoded, is refused (400): a
///   file lookup must never see one (`/app.js%00.html` was served as `text/html`);
/// - a known path asked with a method it does not have is answered 405 with `Allow`, not 404;
/// - a request with more header fields than `maxHeaderCount` is answered 431 (HTTP/1.1's decoder
///   refuses one itself; over HTTP/2 this is where it is counted).
package struct HardeningMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Method and path template (`/api/games/{id}`) of every operation.
    let operations: [(method: String, path: [Substring])]
    let maxHeaderCount: Int

    package init(
        operations: [(method: String, template: String)], maxHeaderCount: Int = ConnectionLimits().maxHeaderCount
    ) {
        self.operations = operations.map { ($0.method.uppercased(), $0.template.split(separator: "/")) }
        self.maxHeaderCount = maxHeaderCount
    }

    package static var securityHeaders: HTTPFields { SecurityHeaders.fields }
}

/// The headers every response carries, made once.
enum SecurityHeaders {
    static let fields: HTTPFields = {
        var fields = HTTPFields()
        fields[.init("X-Content-Type-Options")!] = "nosniff"
        fields[.init("Content-Security-Policy")!] =
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "worker-src 'self'; manifest-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
            + "frame-ancestors 'none'"
        fields[.init("Referrer-Policy")!] = "no-referrer"
        fields[.init("X-Frame-Options")!] = "DENY"
        fields[.init("Cross-Origin-Opener-Policy")!] = "same-origin"
        return fields
    }()
}

extension HardeningMiddleware {

    package func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            // Pseudo-header fields (HTTP/2's :method, :path...) are not in `headers`.
            guard request.headers.count <= maxHeaderCount else {
                throw HTTPError(
                    .requestHeaderFieldsTooLarge, message: "the request has more than \(maxHeaderCount) header fields")
            }
            try Self.checkPath(request.uri.path)
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            if error.status == .notFound, let allowed = allowedMethods(request.uri.path),
                !allowed.contains(request.method.rawValue)
            {
                response = try HTTPError(
                    .methodNotAllowed,
                    headers: [.allow: allowed.joined(separator: ", ")],
                    message: "\(request.method.rawValue) is not allowed on \(request.uri.path); allowed: "
                        + allowed.joined(separator: ", ")
                ).response(from: request, context: context)
            } else {
                response = try error.response(from: request, context: context)
            }
        }
        for field in Self.securityHeaders where response.headers[field.name] == nil {
            response.headers.append(field)
        }
        return response
    }

    /// Refuses a path that is or decodes to anything with a control character.
    static func checkPath(_ path: String) throws {
        // Most paths have no escapes: their bytes are checked as they are.
        if !path.utf8.contains(UInt8(ascii: "%")) {
            guard !path.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                throw HTTPError(.badRequest, message: "the path holds a control character")
            }
            return
        }
        let decoded = path.removingPercentEncoding ?? path
        guard !decoded.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }),
            !path.lowercased().contains("%00")
        else {
            throw HTTPError(.badRequest, message: "the path holds a control character")
        }
    }

    /// The methods of the operations whose template matches `path`; nil when none does.
    func allowedMethods(_ path: String) -> [String]? {
        let parts = path.split(separator: "/")
        let methods = operations.filter { operation in
            operation.path.count == parts.count
                && zip(operation.path, parts).allSatisfy { template, part in
                    (template.hasPrefix("{") && template.hasSuffix("}")) || template == part
                }
        }.map(\.method)
        return methods.isEmpty ? nil : Array(Set(methods)).sorted()
    }
}
