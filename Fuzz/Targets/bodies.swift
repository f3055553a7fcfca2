import Alerts
import Foundation
import Server

/// The API's JSON bodies: preferences read strictly, decoded, applied and validated, as
/// `PUT /api/devices/{id}/preferences` does.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard (try? StrictJSON.check(bytes, keys: .preferences)) != nil else { return 0 }
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    guard let body = try? decoder.decode(PreferencesBody.self, from: Data(bytes)) else { return 0 }
    _ = try? body.applied(to: Preferences())
    return 0
}
