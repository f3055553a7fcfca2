/// What was built: the release it belongs to and the compiler that built it (`nohit --version`,
/// the `nohit_build_info` metric).
package enum BuildInfo {
    /// The release, as tagged: raised with every release.
    package static let version = "0.9.0"

    /// The Swift compiler that built it, as major.minor.
    package static var swift: String {
        #if compiler(>=6.4)
            "6.4+"
        #elseif compiler(>=6.3)
            "6.3"
        #elseif compiler(>=6.2)
            "6.2"
        #else
            "6.1 or older"
        #endif
    }

    /// `nohit --version`'s line.
    package static var summary: String { "nohit \(version) (Swift \(swift))" }
}
