import Alerts
import Foundation
import NIOCore
import NIOHTTP1

/// APNs over this project's lean HTTP/2 client (`HTTP2Client`): frames straight onto a shared
/// connection per host, writes coalesced. The high-throughput path.
package struct HTTP2APNsTransport: APNsTransport {
    let production: HTTP2Client
    let sandbox: HTTP2Client
    let timeout: TimeAmount

    package init(configuration: APNsConfiguration, client: HTTP2Client.Configuration = .init()) throws {
        var client = client
        client.unindexedHeaders.formUnion([":path", "apns-id"])
        production = try HTTP2Client(origin: configuration.productionURL, configuration: client)
        sandbox =
            configuration.sandboxURL == configuration.productionURL
            ? production : try HTTP2Client(origin: configuration.sandboxURL, configuration: client)
        timeout = configuration.timeout
    }

    package func send(_ request: APNsRequest) async -> ProviderOutcome {
        let client = request.environment == .production ? production : sandbox
        do {
            let response = try await client.execute(
                path: request.path, headers: request.headers, body: request.body,
                timeout: timeout)
            return Self.outcome(of: .success(response))
        } catch {
            return Self.outcome(of: .failure(error))
        }
    }

    /// Each environment's requests go to its client in one batch.
    package func send(_ requests: [APNsRequest], report: @escaping OutcomeReport) async {
        for environment in [APNsEnvironment.production, .sandbox] {
            let indices = requests.indices.filter { requests[$0].environment == environment }
            guard !indices.isEmpty else { continue }
            let client = environment == .production ? production : sandbox
            let outgoing = indices.map {
                HTTP2Client.Outgoing(
                    path: requests[$0].path, headers: requests[$0].headers,
                    body: requests[$0].body, sendBy: requests[$0].sendBy)
            }
            await client.submit(outgoing, timeout: timeout) { index, result in
                report(indices[index], Self.outcome(of: result))
            }
        }
    }

    static func outcome(of result: Result<HTTP2Client.Response, HTTP2Client.Failure>) -> ProviderOutcome {
        switch result {
        case .success(let response):
            OutcomeClassifier.apns(
                status: response.status, body: response.body, retryAfter: response.headers.first(name: "retry-after"))
        case .failure(let failure):
            OutcomeClassifier.failure(failure)
        }
    }

    package func shutdown() async {
        await production.shutdown()
        if sandbox !== production { await sandbox.shutdown() }
    }
}
