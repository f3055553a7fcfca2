import Logging
import Storage
import Synchronization

/// The log of requests refused before they could be read (malformed, a head too large, no
/// `Host`, no request in time): one line per client per interval, saying what was refused and
/// how many more from that client since its last line — not a line per request, which a single
/// client could use to fill the disk.
package final class RefusalLog: Sendable {
    private struct Window {
        var loggedAt: ContinuousClock.Instant
        var unlogged: Int
    }

    let logger: Logger
    private let interval: Duration
    private let windows = Mutex<[String: Window]>([:])
    /// Clients remembered at most: past it the windows start again (a line each, at worst).
    private let capacity = 10_000

    package init(logger: Logger, interval: Duration = .seconds(60)) {
        self.logger = logger
        self.interval = interval
    }

    /// A request from `client` refused with `status` because of `reason`: logged unless a line
    /// for the client was written less than the interval before `now`.
    package func refused(client: String, status: String, reason: String, now: ContinuousClock.Instant = .now) {
        let unlogged: Int? = windows.withLock { windows in
            if var window = windows[client], now - window.loggedAt < interval {
                window.unlogged += 1
                windows[client] = window
                return nil
            }
            if windows.count >= capacity { windows.removeAll(keepingCapacity: true) }
            let unlogged = windows[client]?.unlogged ?? 0
            windows[client] = Window(loggedAt: now, unlogged: 0)
            return unlogged
        }
        guard let unlogged else { return }
        var metadata: Logger.Metadata = ["client": "\(client)", "status": "\(status)", "reason": "\(reason)"]
        if unlogged > 0 { metadata["refused_since_last_line"] = "\(unlogged)" }
        logger.notice("refused a request that could not be read", metadata: metadata)
    }
}

/// A logger's handler that lowers one line of HummingbirdWebSocket's to debug: "Error handling
/// upgrade result" with `Inappropriate operation for state`, which it writes at error level
/// whenever a connection is closed before its first request was read — the connections the gate
/// answered itself (a request it could not read, no request in time), already logged by
/// ``RefusalLog`` in the right words. Every other line passes as it is.
struct UpgradeResultLogHandler: ForwardingLogHandler {
    var inner: any LogHandler

    func log(event: LogEvent) {
        var event = event
        if event.level == .error, event.message.description == "Error handling upgrade result",
            case .string(let type)? = event.metadata?["error.type"], type == "Inappropriate operation for state"
        {
            guard inner.logLevel <= .debug else { return }
            event.level = .debug
        }
        inner.log(event: event)
    }

    /// `logger` with its handler wrapped.
    static func wrapping(_ logger: Logger) -> Logger {
        var wrapped = logger
        wrapped.handler = UpgradeResultLogHandler(inner: logger.handler)
        return wrapped
    }
}
