import Foundation

extension UUID {
    /// A name-based UUID, version 5 (SHA-1), as RFC 9562 defines it.
    package static func version5(namespace: UUID, name: String) -> UUID {
        var name = name
        return version5(namespace: namespace) { sha in name.withUTF8 { sha.update(UnsafeRawBufferPointer($0)) } }
    }

    /// A version 5 UUID whose name `name` feeds to the hash, in pieces.
    private static func version5(namespace: UUID, name: (inout SHA1) -> Void) -> UUID {
        var sha = SHA1()
        withUnsafeBytes(of: namespace.uuid) { sha.update($0) }
        name(&sha)
        let h = sha.finish()
        // The first 16 bytes of the digest, marked as version 5 (RFC 9562).
        var bytes = (h.0.bigEndian, h.1.bigEndian, h.2.bigEndian, h.3.bigEndian)
        return withUnsafeMutableBytes(of: &bytes) { digest in
            digest[6] = (digest[6] & 0x0F) | 0x50
            digest[8] = (digest[8] & 0x3F) | 0x80
            return UUID(
                uuid: (
                    digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7], digest[8],
                    digest[9], digest[10], digest[11], digest[12], digest[13], digest[14], digest[15]
                ))
        }
    }

    /// The namespace of delivery ids.
    package static let deliveryNamespace = UUID(uuidString: "6F0B5E3C-0A7E-4C53-9B0A-8A1D3E5C7B21")!

    /// The delivery id of a moment to a device: `apns-id`, `webhook-id`; the same however often it
    /// is derived, so a retry can never become a different message.
    package static func delivery(momentID: String, deviceID: UUID) -> UUID {
        // The name is "<moment id>/<device id, lowercase>", hashed in pieces: a fan-out derives
        // one per device, and building the name as a String cost two allocations each.
        var momentID = momentID
        return version5(namespace: deliveryNamespace) { sha in
            momentID.withUTF8 { sha.update(UnsafeRawBufferPointer($0)) }
            withUnsafeBytes(of: UInt8(ascii: "/")) { sha.update($0) }
            deviceID.withText { sha.update(UnsafeRawBufferPointer($0)) }
        }
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
        var text = text
        guard let uuid = text.withUTF8({ UUID(text: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = uuid
    }

    /// Reads the 36-character text form from UTF-8 bytes (a database column, without making a
    /// String of it first), or nil.
    package init?(text: UnsafeRawBufferPointer) {
        var bytes = (
            UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0),
            UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0)
        )
        let valid = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            var count = 0
            var high: UInt8?
            var position = 0
            for character in text {
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

/// SHA-1 (FIPS 180-4), only for name-based UUIDs; not for anything that needs security. Fed in
/// pieces, without allocating: a fan-out derives a delivery id per device.
struct SHA1 {
    private var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0
    )
    /// The block being filled (64 bytes) and how much of it is.
    private var block: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var filled = 0
    private var length: UInt64 = 0

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        length &+= UInt64(bytes.count)
        absorb(bytes)
    }

    /// The digest, as five big-endian words. The hash is spent.
    mutating func finish() -> (UInt32, UInt32, UInt32, UInt32, UInt32) {
        let bits = (length &* 8).bigEndian
        withUnsafeBytes(of: UInt8(0x80)) { absorb($0) }
        let zeros = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        withUnsafeBytes(of: zeros) { zeros in
            absorb(UnsafeRawBufferPointer(rebasing: zeros[..<((56 - filled + 64) % 64)]))
        }
        withUnsafeBytes(of: bits) { absorb($0) }
        return h
    }

    private mutating func absorb(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let count = min(64 - filled, bytes.count - offset)
            let (start, source) = (filled, bytes.baseAddress! + offset)
            withUnsafeMutableBytes(of: &block) { block in
                (block.baseAddress! + start).copyMemory(from: source, byteCount: count)
            }
            filled += count
            offset += count
            if filled == 64 {
                compress()
                filled = 0
            }
        }
    }

    private mutating func compress() {
        let block = block
        h = withUnsafeBytes(of: block) { bytes in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { w in
                for i in 0..<16 {
                    w[i] = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self))
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
                return (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
            }
        }
    }
}
