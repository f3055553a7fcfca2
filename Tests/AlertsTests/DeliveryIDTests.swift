import Alerts
import Foundation
import Testing

/// Delivery ids are name-based UUIDs (version 5): they must be the ones RFC 9562 defines, for
/// every length of name (SHA-1 pads to 64-byte blocks, and 55/56 bytes is where a second block
/// starts), or a restart would derive different ids for the same alerts.
@Suite struct DeliveryIDTests {
    @Test func rfc9562Example() {
        // RFC 9562, Appendix A.4: the DNS namespace and "www.example.com".
        let dns = UUID(uuidString: "6ba7b810-9dad-11d1-80b4-00c04fd430c8")!
        #expect(
            UUID.version5(namespace: dns, name: "www.example.com")
                == UUID(uuidString: "2ed6657d-e927-568b-95e1-2665a8aea6a2"))
    }

    /// Against Python's `uuid.uuid5` with the delivery namespace; the lengths straddle the block
    /// boundaries (16 bytes of namespace + the name).
    @Test(arguments: [
        (0, "503e4893-62c3-5629-83cd-5fff7cdd09e4"),
        (39, "ec7ed6fd-cfed-51b0-8992-ac6a0d80ff61"),
        (40, "1c2b67dc-11ab-512d-bc92-e288a6617775"),
        (47, "508acaba-a4d5-5cfb-91c3-ec1a68e25eb2"),
        (48, "922a4874-789a-5d5e-805d-baf2e3319a11"),
        (111, "536f59f0-6746-5428-b303-3f0c80a0f6d2"),
        (112, "1cec4f2a-395f-5f49-953b-5001b79f13d9"),
    ])
    func everyLengthOfName(length: Int, expected: String) {
        #expect(
            UUID.version5(namespace: .deliveryNamespace, name: String(repeating: "a", count: length))
                == UUID(uuidString: expected))
    }

    @Test func aDeliveryIDIsTheMomentAndDeviceNamed() {
        let device = UUID(uuidString: "0F3E5D2A-8C1B-4E6F-9A7D-3B2C1D0E4F5A")!
        // uuid.uuid5(namespace, "CHA202008250-home-completed-27/0f3e5d2a-8c1b-4e6f-9a7d-3b2c1d0e4f5a")
        #expect(
            UUID.delivery(momentID: "CHA202008250-home-completed-27", deviceID: device)
                == UUID(uuidString: "f4ec231f-454b-568e-9e28-044810ea83e7"))
    }
}
