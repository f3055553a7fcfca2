import Clocks
import Crypto
import Delivery
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import Storage

/// The operator's feedback hook (as gorush's `feedback_hook_url`): every device a provider said
/// is gone, POSTed once to the operator's https URL, signed as Standard Webhooks with the
/// operator's secret, so their own app server can forget the token too. An event is sent until
/// the hook answers 2xx, always with the same `webhook-id` (the event id): across a crash it may
/// be sent again, never under a new id. Runs beside the dispatchers and stops after them: the
/// last prunes are sent before a graceful stop ends.
package struct FeedbackHook: Service {
    package var store: any FeedbackStore
    package var url: String
    package var key: SymmetricKey
    package var client: HTTP1Client
    package var clock: any WallClock
    package var logger: Logger
    /// How often the store is asked for events due.
    package var interval: Duration = .seconds(1)
    package var timeout: TimeAmount = .seconds(10)
    /// How long a taken event waits for its answer before it may be taken again.
    package var lease: TimeInterval = 60

    package init(
        store: any FeedbackStore, url: String, secret: String, client: HTTP1Client, clock: any WallClock,
        logger: Logger
    ) throws {
        self.store = store
        self.url = url
        key = try StandardWebhooks.key(fromSecret: secret)
        self.client = client
        self.clock = clock
        self.logger = logger
    }

    /// The body: `{"type": "device.pruned", "timestamp": ..., "data": {...}}`.
    package static func body(_ event: FeedbackEvent) -> Data {
        let formatter = ISO8601DateFormatter()
        let object: [String: Any] = [
            "type": "device.pruned",
            "timestamp": formatter.string(from: event.prunedAt),
            "data": [
                "event_id": event.eventID.uuidString.lowercased(),
                "device_id": event.deviceID.uuidString.lowercased(),
                "channel": event.channel,
                "address": event.address,
                "reason": event.reason,
                "pruned_at": formatter.string(from: event.prunedAt),
            ],
        ]
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }

    package func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    do {
                        try await sendDue()
                    } catch {
                        // A full disk: what is not marked sent is sent again at the next look.
                        guard let fault = StorageFault(error) else { throw error }
                        logger.warning("the feedback hook waits for the database: \(fault)")
                    }
                    try await Task.sleep(for: interval)
                }
            }
        } catch is CancellationError {
            // The graceful stop.
        }
        // Stopping: what the dispatchers pruned last goes out before the process ends.
        try await sendDue()
    }

    /// Sends every event due now; returns how many the hook took.
    @discardableResult
    package func sendDue() async throws -> Int {
        var taken = 0
        while true {
            let events = try await store.takeFeedback(now: clock.now(), lease: lease, limit: 50)
            if events.isEmpty { return taken }
            for event in events {
                if try await send(event) { taken += 1 }
            }
            if events.count < 50 { return taken }
        }
    }

    /// One event to the hook; true when it took it.
    func send(_ event: FeedbackEvent) async throws -> Bool {
        let body = Self.body(event)
        let id = "msg_" + event.eventID.uuidString.lowercased()
        let timestamp = Int(clock.now().timeIntervalSince1970)
        let headers = [
            ("content-type", "application/json"), ("webhook-id", id), ("webhook-timestamp", "\(timestamp)"),
            ("webhook-signature", StandardWebhooks.signature(id: id, timestamp: timestamp, body: body, key: key)),
        ]
        let failure: String
        do {
            let response = try await client.execute(
                url: url, headers: headers, body: ByteBuffer(bytes: body), timeout: timeout)
            if (200..<300).contains(response.status) {
                try await store.feedbackSent(event.eventID, at: clock.now())
                return true
            }
            failure = "HTTP \(response.status)"
        } catch {
            failure = "\(error)"
        }
        // Backoff with jitter, from 10 s to an hour.
        let ceiling = min(3600, 10 * pow(2, Double(min(event.attempts, 12))))
        let retry = clock.now().addingTimeInterval(ceiling * Double.random(in: 0.5..<1))
        try await store.feedbackFailed(event.eventID, retryAt: retry, reason: failure)
        logger.warning(
            "feedback hook did not take the event; sent again later",
            metadata: [
                "device.id": "\(event.deviceID)", "reason": "\(failure)",
                "retry.seconds": "\(Int(retry.timeIntervalSince(clock.now())))",
            ])
        return false
    }
}
