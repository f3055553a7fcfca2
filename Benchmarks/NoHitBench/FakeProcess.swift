import AsyncHTTPClient
import FakeProviders
import Foundation
import NIOCore

/// `nohit fake-apns` as a child process: started on a free port, its description read from its
/// first line of output, its CPU time and memory read from /proc.
final class FakeProcess: Sendable {
    let description: FakeProviderDescription
    private let process: Process

    init(executable: String, directory: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["fake-apns", "--dir", directory, "--port", "0"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: executable]) }
            line.append(chunk)
        }
        self.process = process
        description = try JSONDecoder().decode(FakeProviderDescription.self, from: line.prefix { $0 != 0x0A })
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// User plus system CPU seconds the fake has used.
    func cpuSeconds() -> Double {
        ProcessTimes.cpuSeconds(pid: process.processIdentifier)
    }

    /// The fake's resident set now (`VmRSS`) or at its peak (`VmHWM`), in kilobytes.
    func memoryKilobytes(_ field: String) -> Int {
        ProcessMemory.kilobytes(field, pid: "\(process.processIdentifier)")
    }

    /// Starts the fake's peak again from its resident set now.
    @discardableResult
    func resetPeakMemory() -> Bool {
        ProcessMemory.resetPeak(pid: "\(process.processIdentifier)")
    }

    func subscribe(client: HTTPClient) async throws -> (endpoint: String, p256dh: String, auth: String) {
        var request = HTTPClientRequest(url: description.url + "/webpush/subscriptions")
        request.method = .POST
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        guard let endpoint = object?["endpoint"] as? String, let keys = object?["keys"] as? [String: String],
            let p256dh = keys["p256dh"], let auth = keys["auth"]
        else { throw CocoaError(.propertyListReadCorrupt) }
        return (endpoint, p256dh, auth)
    }

    /// How many pushes the fake accepted: unique apns-ids for APNs, 201s for Web Push.
    func acceptedCount(kind: String, client: HTTPClient) async throws -> Int {
        let path = kind == "apns" ? "/accepted/count" : "/stats"
        let response = try await client.execute(HTTPClientRequest(url: description.url + path), timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 30)
        let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        if kind == "apns" { return object?["unique"] as? Int ?? 0 }
        return (object?["statuses"] as? [String: Int])?["201"] ?? 0
    }

    func reset(client: HTTPClient) async throws {
        var request = HTTPClientRequest(url: description.url + "/reset")
        request.method = .POST
        _ = try await client.execute(request, timeout: .seconds(30))
    }
}
