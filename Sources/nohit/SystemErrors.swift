import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system's errors in the words of the command that met them.
enum SystemErrors {
    /// What went wrong opening a listening socket on `host`:`port`, with what to do; nil for an
    /// error that is not about listening.
    static func listening(_ error: any Error, host: String, port: Int) -> String? {
        if let error = error as? IOError {
            switch error.errnoCode {
            case EADDRINUSE:
                return "port \(port) on \(host) is in use: choose another with --port (0 picks a free one)"
            case EACCES:
                return "port \(port) on \(host) needs privileges this process lacks (ports below 1024 do): choose "
                    + "one above 1023 with --port, or put a reverse proxy in front"
            case EADDRNOTAVAIL:
                return "\(host) is not an address of this machine: choose one with --host (127.0.0.1, or 0.0.0.0 "
                    + "for every interface)"
            default:
                return nil
            }
        }
        if error is SocketAddressError || error is SocketAddressError.UnknownHost {
            return "cannot listen on '\(host)': no such address or host name: choose one with --host "
                + "(127.0.0.1, or 0.0.0.0 for every interface)"
        }
        return nil
    }
}
