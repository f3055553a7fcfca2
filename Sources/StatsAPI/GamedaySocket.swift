import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import Synchronization

/// One Gameday push socket: a WebSocket client that reads text messages until the far side closes
/// it, it fails, or the task that reads it is cancelled — whatever the far side does. The channel
/// is closed on every way out: a handshake the far side refuses (any answer but 101), one that does
/// not finish within its deadline, a frame over `maxFrameSize`, the reader's cancellation. Nothing
/// is buffered beyond one frame: the channel reads only as fast as the messages are taken.
struct GamedaySocket {
    /// Why a socket ended.
    enum Failure: Error, CustomStringConvertible {
        case invalidURL(String)
        case refused
        case handshakeTimeout
        case frameTooLarge

        var description: String {
            switch self {
            case .invalidURL(let url): "not a ws:// or wss:// URL: \(url)"
            case .refused: "the handshake was refused (an answer other than 101)"
            case .handshakeTimeout: "the handshake did not finish in time"
            case .frameTooLarge: "a message larger than allowed"
            }
        }
    }

    var url: String
    var maxFrameSize = 1 << 16
    var handshakeTimeout: TimeAmount = .seconds(10)
    var eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton

    private enum Upgrade: Sendable {
        case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    /// Connects and hands `received` every message heard (a text message's text; `nil` for any
    /// other frame, a sign of life), until the socket ends. Throws why it ended, unless the far
    /// side closed it.
    func run(_ received: @Sendable (String?) async -> Void) async throws {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty,
            let scheme = components.scheme?.lowercased(), scheme == "ws" || scheme == "wss"
        else { throw Failure.invalidURL(url) }
        let secure = scheme == "wss"
        let port = components.port ?? (secure ? 443 : 80)
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?" + query }
        let tls = try secure ? NIOSSLContext(configuration: .makeClientConfiguration()) : nil
        let (maxFrameSize, requestPath) = (self.maxFrameSize, path)
        let handshake = Handshake()

        let upgrade = try await ClientBootstrap(group: eventLoopGroup)
            .connectTimeout(handshakeTimeout)
            .connect(host: host, port: port) { channel in
                handshake.began(on: channel)
                return channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: tls, serverHostname: host))
                    }
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: maxFrameSize) { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            .webSocket(
                                try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(
                                    wrappingChannelSynchronously: channel,
                                    configuration: .init(backPressureStrategy: .init(lowWatermark: 1, highWatermark: 4))
                                ))
                        }
                    }
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: components.port == nil ? host : "\(host):\(port)")
                    let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: requestPath, headers: headers)
                    let configuration = NIOUpgradableHTTPClientPipelineConfiguration(
                        upgradeConfiguration: NIOTypedHTTPClientUpgradeConfiguration(
                            upgradeRequestHead: request, upgraders: [upgrader],
                            notUpgradingCompletionHandler: { channel in
                                // Any answer but 101: closed at once, whatever it goes on to send.
                                channel.close(promise: nil)
                                return channel.eventLoop.makeSucceededFuture(.refused)
                            }))
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: configuration)
                }
            }
        // The handshake: within its deadline, or when the reader is cancelled, the channel closes
        // (and the upgrade fails with it).
        let deadline = upgrade.eventLoop.scheduleTask(in: handshakeTimeout) { handshake.timedOut() }
        let result: Upgrade
        do {
            result = try await withTaskCancellationHandler {
                try await upgrade.get()
            } onCancel: {
                handshake.close()
            }
        } catch {
            deadline.cancel()
            if handshake.didTimeOut { throw Failure.handshakeTimeout }
            throw error
        }
        deadline.cancel()
        switch result {
        case .refused:
            throw Failure.refused
        case .webSocket(let channel):
            try await read(channel, received)
        }
    }

    /// The frames as they come: text to `received`, pings answered, a close answered and ended.
    private func read(
        _ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, _ received: @Sendable (String?) async -> Void
    ) async throws {
        try await withTaskCancellationHandler {
            try await channel.executeThenClose { inbound, outbound in
                var text: ByteBuffer?
                for try await frame in inbound {
                    switch frame.opcode {
                    case .ping:
                        try await outbound.write(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData))
                        await received(nil)
                    case .connectionClose:
                        try? await outbound.write(
                            WebSocketFrame(fin: true, opcode: .connectionClose, data: ByteBuffer()))
                        return
                    case .text:
                        text = frame.unmaskedData
                        if frame.fin, let whole = text {
                            await received(String(buffer: whole))
                            text = nil
                        }
                    case .continuation:
                        guard var partial = text else { continue }
                        var data = frame.unmaskedData
                        guard partial.readableBytes + data.readableBytes <= maxFrameSize else {
                            throw Failure.frameTooLarge
                        }
                        partial.writeBuffer(&data)
                        text = partial
                        if frame.fin {
                            await received(String(buffer: partial))
                            text = nil
                        }
                    default:
                        await received(nil)
                    }
                }
            }
        } onCancel: {
            channel.channel.close(promise: nil)
        }
    }
}

/// The channel a handshake runs on, closed from outside it: by its deadline, or when the reader
/// is cancelled.
private final class Handshake: Sendable {
    private let state = Mutex<(channel: (any Channel)?, timedOut: Bool)>((nil, false))

    var didTimeOut: Bool { state.withLock { $0.timedOut } }

    func began(on channel: any Channel) {
        state.withLock { $0.channel = channel }
    }

    func timedOut() {
        let channel = state.withLock { state in
            state.timedOut = true
            return state.channel
        }
        channel?.close(promise: nil)
    }

    func close() {
        state.withLock { $0.channel }?.close(promise: nil)
    }
}
