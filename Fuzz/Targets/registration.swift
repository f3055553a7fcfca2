import Delivery
import Foundation
import Server

/// A device registration as the API reads it: the strict JSON reader with the registration's
/// keys, and the endpoint's host as registration and the SSRF check read it (every numeric form
/// `inet_aton` takes, IPv6, names).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // A host on its own (the input as text), as the registrar reads it.
    let text = String(decoding: bytes, as: UTF8.self)
    if case .ipv4(let address, _) = IPAddress.read(host: text) { _ = address.internalRange }
    if case .ipv6(let address) = IPAddress.read(host: text) { _ = address.internalRange }
    // A whole registration body.
    guard (try? StrictJSON.check(bytes, keys: .deviceRegistration)) != nil,
        let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    else { return 0 }
    for field in ["url", "endpoint"] {
        guard let url = object[field] as? String, let host = URLComponents(string: url)?.host else { continue }
        switch IPAddress.read(host: host) {
        case .ipv4(let address, _), .ipv6(let address): _ = address.internalRange
        case .name, .invalid: break
        }
    }
    return 0
}
