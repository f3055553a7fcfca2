import Foundation

extension UUID {
    /// A name-based UUID, version 5 (SHA-1), as RFC 9562 defines it.
    package static func version5(namespace: UUID, name: String) -> UUID {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16 + name.utf8.count + 72)
        withUnsafeBytes(of: namespace.uuid) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: name.utf8)
        var digest = SHA1.digest(bytes)
        digest[6] = (digest[6] & 0x0F) | 0x50
        digest[8] = (digest[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7], digest[8],
                digest[9], digest[10], digest[11], digest[12], digest[13], digest[14], digest[15]
            ))
    }

    /// The namespace of delivery ids.
    package static let deliveryNamespace = UUID(uuidString: "6F0B5E3C-0A7E-4C53-9B0A-8A1D3E5C7B21")!

    /// The delivery id of a moment to a device: `apns-id`, `webhook-id`; the same however often it
    /// is derived, so a retry can never become a different message.
    package static func delivery(momentID: String, deviceID: UUID) -> UUID {
        version5(namespace: deliveryNamespace, name: "\(momentID)/\(deviceID.text())")
    }

    private static let hexDigits = Array("0123456789abcdef0123456789ABCDEF".utf8)

    /// The 36-character text form (`8-4-4-4-12` hex digits), lowercase unless asked otherwise —
    /// the same text as `uuidString` (uppercase) or `uuidString.lowercased()`, made without
    /// Foundation's formatting, which costs more than the rest of a fan-out's planning.
    package func text(uppercase: Bool = false) -> String {
        String(unsafeUninitializedCapacity: 36) { out in
            write(into: out, uppercase: uppercase)
            return 36
        }
    }

    /// Calls `body` with the 36 bytes of `text(uppercase:)`, without making a String (which, at 36
    /// bytes, is an allocation).
    package func withText<Result>(uppercase: Bool = false, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result)
        rethrows -> Result
    {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { out in
            write(into: out, uppercase: uppercase)
            return try body(UnsafeBufferPointer(out))
        }
    }

    private func write(into out: UnsafeMutableBufferPointer<UInt8>, uppercase: Bool) {
        let offset = uppercase ? 16 : 0
        withUnsafeBytes(of: uuid) { bytes in
            var index = 0
            for (position, byte) in bytes.enumerated() {
                if position == 4 || position == 6 || position == 8 || position == 10 {
                    out[index] = UInt8(ascii: "-")
                    index += 1
                }
                out[index] = Self.hexDigits[offset + Int(byte >> 4)]
                out[index + 1] = Self.hexDigits[offset + Int(byte & 0x0F)]
                index += 2
            }
        }
    }

    /// Reads the 36-character text form in either case (what `UUID(uuidString:)` accepts), or
    /// nil.
    package init?(text: String) {
        var bytes = (
            UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0),
            UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0)
        )
        let valid = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            var count = 0
            var high: UInt8?
            var position = 0
            for character in text.utf8 {
                defer { position += 1 }
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard character == UInt8(ascii: "-") else { return false }
                    continue
                }
                let value: UInt8
                switch character {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): value = character - UInt8(ascii: "A") + 10
                default: return false
                }
                guard count < 16 else { return false }
                if let first = high {
                    out[count] = first << 4 | value
                    count += 1
                    high = nil
                } else {
                    high = value
                }
            }
            return position == 36 && count == 16
        }
        guard valid else { return nil }
        self.init(uuid: bytes)
    }
}

/// SHA-1 (FIPS 180-4), only for name-based UUIDs; not for anything that needs security.
enum SHA1 {
    static func digest(_ message: [UInt8]) -> [UInt8] {
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (
            0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0
        )
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bits = UInt64(message.count) * 8
        for shift in stride(from: 56, through: 0, by: -8) {
            padded.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
        }
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { w in
            for chunk in stride(from: 0, to: padded.count, by: 64) {
                for i in 0..<16 {
                    w[i] =
                        UInt32(padded[chunk + 4 * i]) << 24 | UInt32(padded[chunk + 4 * i + 1]) << 16
                        | UInt32(padded[chunk + 4 * i + 2]) << 8 | UInt32(padded[chunk + 4 * i + 3])
                }
                for i in 16..<80 {
                    let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                    w[i] = x << 1 | x >> 31
                }
                var (a, b, c, d, e) = h
                for i in 0..<80 {
                    let (f, k): (UInt32, UInt32)
                    switch i {
                    case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                    case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                    case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                    default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                    }
                    let temp = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
                    (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, temp)
                }
                h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
            }
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(20)
        for word in [h.0, h.1, h.2, h.3, h.4] {
            for shift in stride(from: 24, through: 0, by: -8) {
                digest.append(UInt8(truncatingIfNeeded: word >> shift))
            }
        }
        return digest
    }
}
