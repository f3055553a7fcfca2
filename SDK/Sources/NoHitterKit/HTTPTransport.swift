import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How NoHitterKit talks HTTP: one request, its status and body. `URLSessionTransport` is the
/// real one; an app may pass its own (a pinned session, a proxy).
public protocol HTTPTransport: Sendable {
    func send(_ request: URLRequest) async throws -> (status: Int, body: Data)
}

/// HTTP through a `URLSession` (FoundationNetworking on Linux).
public struct URLSessionTransport: HTTPTransport {
    public let session: URLSession

    public init(session: URLSession = .shared) {
        self.session = session
    }

    public func send(_ request: URLRequest) async throws -> (status: Int, body: Data) {
        let (body, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw NoHitterError.notHTTP(request.url) }
        return (http.statusCode, body)
    }
}

/// What went wrong talking to the service.
public enum NoHitterError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered `status` with `message` (its JSON error's message, or the body).
    case http(status: Int, message: String)
    /// The answer was not what the call expects.
    case unexpectedAnswer(String)
    case notHTTP(URL?)
    /// A setting the caller gave cannot work (what and why).
    case invalid(String)

    public var description: String {
        switch self {
        case .http(let status, let message): "the server answered \(status): \(message)"
        case .unexpectedAnswer(let what): "unexpected answer: \(what)"
        case .notHTTP(let url): "not an HTTP answer from \(url?.absoluteString ?? "?")"
        case .invalid(let why): why
        }
    }
}
