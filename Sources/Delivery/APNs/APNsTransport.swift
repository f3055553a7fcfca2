import Alerts
import Foundation
import NIOCore

/// Where and how to reach APNs.
package struct APNsConfiguration: Sendable {
    /// `https://api.push.apple.com` in production, `https://api.sandbox.push.apple.com` for the
    /// sandbox; `nohit fake-apns`'s URL in tests and the demo.
    package var productionURL: String
    package var sandboxURL: String
    /// Each request's deadline; a stall past it is retried.
    package var timeout: TimeAmount

    package init(
        productionURL: String = "https://api.push.apple.com", sandboxURL: String = "https://api.sandbox.push.apple.com",
        timeout: TimeAmount = .seconds(10)
    ) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.timeout = timeout
    }
}

/// One APNs request to the environment's host: `POST /3/device/<token>`, or a broadcast's
/// `POST /4/broadcasts/apps/<bundle>` (the same hosts serve both).
package struct APNsRequest: Sendable {
    package var environment: APNsEnvironment
    package var deviceToken: String
    package var headers: [(String, String)]
    package var body: ByteBuffer
    /// A broadcast's path; nil for a device's push.
    package var broadcastPath: String?
    /// The last moment it may be put on the wire (``OutboundDelivery/sendBy``).
    package var sendBy: ContinuousClock.Instant?

    package init(
        environment: APNsEnvironment, deviceToken: String, headers: [(String, String)], body: ByteBuffer,
        broadcastPath: String? = nil
    ) {
        self.environment = environment
        self.deviceToken = deviceToken
        self.headers = headers
        self.body = body
        self.broadcastPath = broadcastPath
    }

    /// The request's path on the host.
    package var path: String { broadcastPath ?? "/3/device/\(deviceToken)" }
}

/// How APNs requests travel: the HTTP/2 connection(s) to the production and sandbox hosts.
package protocol APNsTransport: Sendable {
    /// Sends `POST /3/device/<token>` and classifies the answer.
    func send(_ request: APNsRequest) async -> ProviderOutcome
    /// Starts sending all of `requests`; `report` gets each classified answer by index.
    func send(_ requests: [APNsRequest], report: @escaping OutcomeReport) async
    func shutdown() async
}

extension APNsTransport {
    package func send(_ requests: [APNsRequest], report: @escaping OutcomeReport) async {
        await withTaskGroup(of: Void.self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask {
                    report(
                        index,
                        OutboundDelivery.hasPassed(request.sendBy) ? OutboundDelivery.notSent : await send(request))
                }
            }
        }
    }
}
