import Foundation

#if canImport(Glibc)
    import CEpoll
    import Glibc

    /// The SSE benchmark's clients as plain sockets read with `epoll` on one thread: each ready
    /// socket read into one buffer and scanned for moments (`MomentScanner`), nothing allocated per
    /// read. The clients share the machine with the server; what they spend reading is CPU the
    /// server does not get (NIO's channel per client, a buffer and a pipeline per read, cost about
    /// twice as much).
    final class EpollSSEClients: @unchecked Sendable {
        private var sockets: [Int32] = []
        private var scanners: [Int32: MomentScanner] = [:]
        private let poll: Int32

        struct Failure: Error, CustomStringConvertible {
            let description: String
        }

        init() throws {
            poll = epoll_create1(0)
            guard poll >= 0 else { throw Failure(description: "epoll_create1: \(String(cString: strerror(errno)))") }
        }

        deinit {
            for socket in sockets { close(socket) }
            close(poll)
        }

        /// Opens `count` connections to 127.0.0.1:`port`, each asking for the live stream, 250 at a
        /// time (each batch answered before the next, so the server's accept queue never overflows).
        func connect(port: Int, count: Int) throws {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let request = Array("GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".utf8)
            for batch in stride(from: 0, to: count, by: 250) {
                var opened: [Int32] = []
                for _ in batch..<min(count, batch + 250) {
                    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                    guard socket >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
                    let connected = withUnsafePointer(to: &address) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                        }
                    }
                    guard connected == 0 else {
                        close(socket)
                        throw Failure(description: "connect to port \(port): \(String(cString: strerror(errno)))")
                    }
                    guard request.withUnsafeBytes({ write(socket, $0.baseAddress, $0.count) }) == request.count else {
                        close(socket)
                        throw Failure(description: "the request could not be written")
                    }
                    opened.append(socket)
                }
                // Each answered (its head read: blocking, before the socket joins the poll).
                var head = [UInt8](repeating: 0, count: 4096)
                for socket in opened {
                    guard head.withUnsafeMutableBytes({ Glibc.read(socket, $0.baseAddress, $0.count) }) > 0 else {
                        throw Failure(description: "a connection closed before its answer")
                    }
                    _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
                    var event = epoll_event()
                    cepoll_set(&event, cepoll_in(), socket)
                    guard epoll_ctl(poll, EPOLL_CTL_ADD, socket, &event) == 0 else {
                        throw Failure(description: "epoll_ctl: \(String(cString: strerror(errno)))")
                    }
                    scanners[socket] = MomentScanner()
                    sockets.append(socket)
                }
            }
        }

        var count: Int { sockets.count }

        /// Reads every socket as data comes, handing each moment's id to `found`, until `stop`
        /// says so (asked every 20 ms at least).
        func read(until stop: () -> Bool, found: (String) -> Void) {
            let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: 1024)
            defer { events.deallocate() }
            var buffer = [UInt8](repeating: 0, count: 256 * 1024)
            while !stop() {
                let ready = epoll_wait(poll, events, 1024, 20)
                guard ready > 0 else { continue }
                for index in 0..<ready {
                    let socket = cepoll_fd(events, index)
                    while true {
                        let count = buffer.withUnsafeMutableBytes { Glibc.read(socket, $0.baseAddress, $0.count) }
                        guard count > 0 else {
                            if count == 0 || (errno != EAGAIN && errno != EINTR) {
                                // Closed by the server: no more from it.
                                epoll_ctl(poll, EPOLL_CTL_DEL, socket, nil)
                            }
                            break
                        }
                        buffer.withUnsafeBytes { bytes in
                            scanners[socket]!.scan(UnsafeRawBufferPointer(rebasing: bytes[..<count]), found: found)
                        }
                        if count < buffer.count { break }
                    }
                }
            }
        }
    }
#endif
