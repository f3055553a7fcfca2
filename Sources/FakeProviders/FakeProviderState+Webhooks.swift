import Alerts
import Crypto
import Delivery
import Foundation
import Synchronization

/// The fake webhook receivers: Standard Webhooks signatures verified, messages kept.
extension FakeProviderState {
    /// A new webhook endpoint with its signing secret (prefix `410-` answers 410, `503-` fails then
    /// succeeds, `307-` redirects to `redirectLocation`).
    package func webhookEndpoint(id: String = UUID().uuidString.lowercased(), baseURL: String) -> (
        url: String, secret: String
    ) {
        let secret = StandardWebhooks.newSecret()
        ledger.withLock { $0.webhooks[id] = (secret, []) }
        return ("\(baseURL)/webhooks/\(id)", secret)
    }

    /// Answers `POST /webhooks/<id>`: verifies the Standard Webhooks signature and a timestamp
    /// within five minutes, and records the message.
    package func webhook(id: String, headers: FakeRequestHeaders, body: Data, now: Date) -> FakeReply {
        func header(_ name: String) -> String? { headers[name] }
        ledger.withLock { $0.requests += 1 }
        guard let endpoint = ledger.withLock({ $0.webhooks[id] }) else {
            return .json(404, ["reason": "no such endpoint"])
        }
        guard let messageID = header("webhook-id"), let stamp = header("webhook-timestamp").flatMap(Int.init),
            let signature = header("webhook-signature"),
            let key = try? StandardWebhooks.key(fromSecret: endpoint.secret),
            StandardWebhooks.verify(header: signature, id: messageID, timestamp: stamp, body: body, key: key)
        else { return .json(401, ["reason": "bad signature"]) }
        guard abs(Double(stamp) - now.timeIntervalSince1970) < 300 else {
            return .json(400, ["reason": "stale timestamp"])
        }
        if id.hasPrefix("410-") { return .json(410, ["reason": "gone"]) }
        if id.hasPrefix("307-") {
            return .json(307, ["reason": "moved"], headers: [("location", configuration.redirectLocation)])
        }
        let attempt = ledger.withLock { ledger -> Int in
            ledger.attempts["webhook:" + messageID, default: 0] += 1
            return ledger.attempts["webhook:" + messageID]!
        }
        if id.hasPrefix("503-") && attempt <= configuration.failuresBeforeSuccess {
            return .json(503, ["reason": "unavailable"])
        }
        ledger.withLock { $0.webhooks[id]?.received.append((messageID, body)) }
        return .respond(status: 204, headers: [], body: Data())
    }

    /// Messages a webhook endpoint received: id and body.
    package func webhookMessages(id: String) -> [(id: String, body: Data)]? {
        ledger.withLock { $0.webhooks[id]?.received }
    }
}
