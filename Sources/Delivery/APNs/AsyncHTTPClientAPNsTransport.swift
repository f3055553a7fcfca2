import Alerts
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// APNs over AsyncHTTPClient.
package struct AsyncHTTPClientAPNsTransport: APNsTransport {
    let client: HTTPClient
    let configuration: APNsConfiguration

    package init(client: HTTPClient, configuration: APNsConfiguration) {
        self.client = client
        self.configuration = configuration
    }

    package func send(_ apns: APNsRequest) async -> ProviderOutcome {
        let base = apns.environment == .production ? configuration.productionURL : configuration.sandboxURL
        var request = HTTPClientRequest(url: "\(base)\(apns.path)")
        request.method = .POST
        request.headers.add(contentsOf: apns.headers)
        request.body = .bytes(apns.body)
        do {
            let response = try await client.execute(request, timeout: configuration.timeout)
            let body = try await response.body.collect(upTo: 64 * 1024)
            return OutcomeClassifier.apns(
                status: Int(response.status.code), body: body, retryAfter: response.headers.first(name: "retry-after"))
        } catch {
            return OutcomeClassifier.failure(error)
        }
    }

    /// The client is shared with other channels; its owner shuts it down.
    package func shutdown() async {}
}
