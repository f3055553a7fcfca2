import Crypto
import Foundation
import Synchronization

/// What the fake answers to one request.
package enum FakeReply: Sendable, Equatable {
    case respond(status: Int, headers: [(String, String)], body: Data)
    /// Send GOAWAY on the connection (this stream not processed) and close it.
    case goAway
    /// Never answer.
    case stall

    package static func == (lhs: FakeReply, rhs: FakeReply) -> Bool {
        switch (lhs, rhs) {
        case (.goAway, .goAway), (.stall, .stall): true
        case (.respond(let a, let h1, let b1), .respond(let b, let h2, let b2)):
            a == b && b1 == b2 && h1.map { "\($0)=\($1)" } == h2.map { "\($0)=\($1)" }
        default: false
        }
    }

    static func json(_ status: Int, _ object: [String: Any], headers: [(String, String)] = []) -> FakeReply {
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return .respond(status: status, headers: [("content-type", "application/json")] + headers, body: body)
    }

    static func apnsError(_ status: Int, _ reason: String, timestamp: Int? = nil) -> FakeReply {
        var object: [String: Any] = ["reason": reason]
        if let timestamp { object["timestamp"] = timestamp }
        return json(status, object)
    }
}
