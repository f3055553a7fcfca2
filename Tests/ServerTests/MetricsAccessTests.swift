import NIOCore
import Server
import Testing

/// Who may read /metrics, decided from the client's address and its Authorization header (the
/// addresses are made, never connected to).
@Suite struct MetricsAccessTests {
    static func address(_ ip: String) throws -> SocketAddress { try SocketAddress(ipAddress: ip, port: 9090) }

    @Test func loopbackIsTheDefaultAndOnlyLoopbackClientsAreServed() throws {
        let access = MetricsAccess.loopback
        for ip in ["127.0.0.1", "127.4.5.6", "::1", "::ffff:127.0.0.1"] {
            #expect(access.check(address: try Self.address(ip), authorization: nil, adminToken: nil) == nil, "\(ip)")
        }
        for ip in ["203.0.113.5", "10.0.0.1", "::ffff:203.0.113.5", "2001:db8::1", "128.0.0.1"] {
            #expect(
                access.check(address: try Self.address(ip), authorization: nil, adminToken: "t")
                    == .forbidden("/metrics is served to loopback only (http.metrics)"), "\(ip)")
        }
        #expect(APIServer.Options().metricsAccess == .loopback)
        // Through a proxy on the same host (the documented nginx set-up): from loopback, but for
        // someone else.
        for header in MetricsAccess.forwardingHeaders {
            let refusal = access.check(
                address: try Self.address("127.0.0.1"), authorization: nil, adminToken: nil, forwardedBy: header)
            #expect(refusal != nil && "\(refusal!)".contains("came through a proxy (\(header))"))
        }
    }

    @Test func withTheTokenSettingOnlyTheAdminTokenReads() throws {
        let far = try Self.address("203.0.113.5")
        let access = MetricsAccess.token
        #expect(access.check(address: far, authorization: "Bearer s3cret", adminToken: "s3cret") == nil)
        for authorization in [nil, "Bearer wrong", "Basic czNjcmV0", "s3cret"] {
            guard case .unauthorized = access.check(address: far, authorization: authorization, adminToken: "s3cret")
            else {
                Issue.record("\(authorization ?? "none") was let in")
                continue
            }
        }
        guard case .forbidden = access.check(address: far, authorization: "Bearer x", adminToken: nil) else {
            Issue.record("a server without a token let a scrape in")
            return
        }
    }

    @Test func openAndOff() throws {
        let far = try Self.address("203.0.113.5")
        #expect(MetricsAccess.open.check(address: far, authorization: nil, adminToken: nil) == nil)
        #expect(
            MetricsAccess.off.check(address: try Self.address("127.0.0.1"), authorization: nil, adminToken: nil)
                == .notFound)
    }
}
