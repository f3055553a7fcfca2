import Alerts
import Crypto
import Foundation
import Synchronization

/// A request's header fields, looked up by lowercase name (the first of a repeated name wins);
/// pseudo-headers are left out.
package struct FakeRequestHeaders: Sendable {
    /// A dozen fields: a linear search beats hashing them into a dictionary.
    private var fields: [(name: String, value: String)] = []

    package init(_ pairs: some Sequence<(String, String)>) {
        fields.reserveCapacity(16)
        for (name, value) in pairs where !name.hasPrefix(":") {
            // HTTP/2 names are lowercase already; only HTTP/1.1 ones may need it.
            let name = name.utf8.contains(where: { (0x41...0x5A).contains($0) }) ? name.lowercased() : name
            fields.append((name, value))
        }
    }

    package subscript(_ name: String) -> String? { fields.first { $0.name == name }?.value }
}
