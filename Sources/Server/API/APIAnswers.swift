import Alerts
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// What every route answers with: JSON in the API's one encoding (snake_case keys, ISO 8601
/// dates, sorted keys), and errors as `{"error":{"message":...}}` (Hummingbird's `HTTPError`).
package enum API {
    /// The service's one JSON encoding (``WireJSON``): the answers, the stream, the payloads.
    package static var encoder: JSONEncoder { WireJSON.encoder }

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    /// A JSON body made before (`BoardViewCache`) as an answer.
    static func json(body: ByteBuffer, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }

    /// `value` as the API's JSON body.
    static func body<Value: Encodable>(_ value: Value) throws -> ByteBuffer {
        ByteBuffer(data: try encoder.encode(value))
    }

    /// `value` as the API's JSON.
    package static func json<Value: Encodable>(_ value: Value, status: HTTPResponse.Status = .ok) throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(
            status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: try encoder.encode(value))))
    }

    static func error(_ status: HTTPResponse.Status, _ message: String) -> HTTPError {
        HTTPError(status, message: message)
    }

    /// A decoding error in words: which key, and what was wrong with it.
    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing \(path(context.codingPath + [key]))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        default:
            return "\(error)"
        }
    }

    static func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty
            ? "the document" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
