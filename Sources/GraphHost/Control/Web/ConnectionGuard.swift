import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// Bounds the page server's connections against slow, idle and unauthenticated clients: at most `limit` connections
/// are open, at most `perAddressLimit` from one client address, and a connection must send its first request's head
/// within `headDeadline`. A connection is unauthenticated until one of its requests passes `WebAccess`. When a new
/// connection finds no place (overall or for its address), the oldest unauthenticated connection (still waiting for
/// its head, or sent only refused requests) is closed to make room, so a client with the token gets in while
/// strangers hold places; with none, the newcomer is closed. A refused request's connection is closed once its answer
/// is written (`RequestScreen`). After the first request, Hummingbird's idle timeout bounds the connection, and a
/// WebSocket lives as long as its page.
final class ConnectionGuard: Sendable {
    let limit: Int
    let perAddressLimit: Int
    let headDeadline: TimeAmount

    private struct Connection {
        var order: Int
        var channel: any Channel
        var address: String
        var authenticated = false
        var deadline: Scheduled<Void>?
    }
    private struct State {
        var opened = 0
        var connections: [ObjectIdentifier: Connection] = [:]

        /// The oldest unauthenticated connection among those `matching`.
        func oldestStranger(_ matching: (Connection) -> Bool) -> ObjectIdentifier? {
            connections.filter { !$0.value.authenticated && matching($0.value) }
                .min(by: { $0.value.order < $1.value.order })?.key
        }
    }
    private let state = Mutex(State())

    init(limit: Int = 256, perAddressLimit: Int = 64, headDeadline: TimeAmount = .seconds(10)) {
        self.limit = limit
        self.perAddressLimit = perAddressLimit
        self.headDeadline = headDeadline
    }

    /// Takes a new connection in, making room if needed; false when it was closed instead.
    func admit(_ channel: any Channel) -> Bool {
        let id = ObjectIdentifier(channel)
        let address = channel.remoteAddress?.ipAddress ?? ""
        let (admitted, evicted): (Bool, [any Channel]) = state.withLock { s in
            var evicted: [any Channel] = []
            func makeRoom(_ matching: (Connection) -> Bool) -> Bool {
                guard let stranger = s.oldestStranger(matching) else { return false }
                evicted.append(s.connections.removeValue(forKey: stranger)!.channel)
                return true
            }
            if s.connections.values.count(where: { $0.address == address }) >= perAddressLimit {
                guard makeRoom({ $0.address == address }) else { return (false, evicted) }
            }
            if s.connections.count >= limit {
                guard makeRoom({ _ in true }) else { return (false, evicted) }
            }
            s.opened += 1
            s.connections[id] = Connection(order: s.opened, channel: channel, address: address)
            return (true, evicted)
        }
        for channel in evicted { channel.close(promise: nil) }
        guard admitted else {
            channel.close(promise: nil)
            return false
        }
        // The deadline holds the channel weakly and is cancelled once the head arrives or the connection closes:
        // a closed connection's buffers go at once, not when its deadline would have passed.
        let deadline = channel.eventLoop.scheduleTask(in: headDeadline) { [weak channel] in
            if let channel { channel.close(promise: nil) }
        }
        state.withLock { $0.connections[id]?.deadline = deadline }
        channel.closeFuture.whenComplete { _ in
            let left = self.state.withLock { $0.connections.removeValue(forKey: id) }
            left?.deadline?.cancel()
        }
        return true
    }

    /// A request head has arrived: the connection no longer waits for its first.
    func headArrived(_ channel: any Channel) {
        state.withLock { s -> Scheduled<Void>? in
            defer { s.connections[ObjectIdentifier(channel)]?.deadline = nil }
            return s.connections[ObjectIdentifier(channel)]?.deadline
        }?.cancel()
    }

    /// A request on the connection passed `WebAccess`: it is no longer evicted to make room.
    func authenticated(_ channel: any Channel) {
        state.withLock { $0.connections[ObjectIdentifier(channel)]?.authenticated = true }
    }
}

/// Screens every request right after the HTTP/1.1 decoder, before the WebSocket upgrade and Hummingbird see it, so a
/// stranger's request costs one check and never a task: a head the decoder cannot read is answered with 400 at once
/// (not left to the head deadline); a request with more than one Host header, or an absolute-form URI that names
/// another host than its Host header, is refused with 400; one `WebAccess` refuses (token, Host, Origin) with its
/// status. Each refusal closes the connection once written, as does any response marked `Connection: close`. A
/// request that passes makes its connection authenticated (`ConnectionGuard`).
final class RequestScreen: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = Any
    typealias OutboundIn = Any
    private let connections: ConnectionGuard
    private let access: @Sendable () -> WebAccess?
    private var heads = 0
    private var refusing = false
    private var closeAfterResponse = false

    init(connections: ConnectionGuard, access: @escaping @Sendable () -> WebAccess?) {
        self.connections = connections
        self.access = access
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refusing else { return }
        if case .head(let head)? = unwrapInboundIn(data) as? HTTPServerRequestPart {
            heads += 1
            connections.headArrived(context.channel)
            if let problem = Self.problem(head) { return refuse(context, .badRequest, problem) }
            guard let access = access() else { return refuse(context, .serviceUnavailable, "starting") }
            do throws(WebAccess.Refusal) {
                try access.check(head)
            } catch {
                return refuse(context, HTTPResponseStatus(statusCode: error.status), error.reason)
            }
            connections.authenticated(context.channel)
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Once a request has passed, Hummingbird answers a later malformed one itself.
        if error is HTTPParserError, heads == 0, !refusing {
            return refuse(context, .badRequest, "the request is not well-formed HTTP/1.1")
        }
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) as? HTTPServerResponsePart {
        case .head(let head)?:
            closeAfterResponse = head.headers[canonicalForm: "connection"].contains { $0.lowercased() == "close" }
        case .end? where closeAfterResponse:
            let written = promise ?? context.eventLoop.makePromise()
            context.write(data, promise: written)
            written.futureResult.whenComplete { _ in context.close(promise: nil) }
            return
        default: break
        }
        context.write(data, promise: promise)
    }

    /// Why a request head is refused, or nil.
    static func problem(_ head: HTTPRequestHead) -> String? {
        let hosts = head.headers["Host"]
        guard hosts.count <= 1 else { return "a request must have one Host header" }
        let uri = head.uri.lowercased()
        for scheme in ["http://", "https://"] where uri.hasPrefix(scheme) {
            let authority = uri.dropFirst(scheme.count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            guard let host = hosts.first?.lowercased(), authority == host else {
                return "the request's URI names another host than its Host header"
            }
        }
        return nil
    }

    private func refuse(_ context: ChannelHandlerContext, _ status: HTTPResponseStatus, _ reason: String) {
        refusing = true
        let body = context.channel.allocator.buffer(string: reason + "\n")
        let headers = HTTPHeaders([
            ("Content-Type", "text/plain"), ("Content-Length", "\(body.readableBytes)"), ("Connection", "close"),
        ])
        context.write(
            NIOAny(HTTPServerResponsePart.head(.init(version: .http1_1, status: status, headers: headers))),
            promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete { _ in
            context.close(promise: nil)
        }
    }
}

/// A Hummingbird child channel whose connections pass `ConnectionGuard` before `inner` sets them up, and whose
/// requests pass `RequestScreen` right after the HTTP decoder.
struct GuardedChildChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner
    let connections: ConnectionGuard
    let access: @Sendable () -> WebAccess?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard connections.admit(channel) else {
            return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
        }
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let decoder = try channel.pipeline.syncOperations.handler(
                type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(
                RequestScreen(connections: connections, access: access), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async { await inner.handle(value: value, logger: logger) }
}

extension WebAccess {
    /// Checks a request head as `check(host:origin:queryToken:cookie:)` does; the token may come in the query of `/`.
    func check(_ head: HTTPRequestHead) throws(Refusal) {
        var target = Substring(head.uri)
        for scheme in ["http://", "https://"] where target.lowercased().hasPrefix(scheme) {
            target = target.dropFirst(scheme.count).drop { $0 != "/" }
        }
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var queryToken: String?
        if parts.count == 2, parts[0] == "/" {
            for pair in parts[1].split(separator: "&") {
                let keyValue = pair.split(separator: "=", maxSplits: 1)
                if keyValue.count == 2, keyValue[0] == "token" { queryToken = String(keyValue[1]) }
            }
        }
        let cookies = head.headers["Cookie"]
        try check(
            host: head.headers["Host"].first, origin: head.headers["Origin"].first, queryToken: queryToken,
            cookie: cookies.isEmpty ? nil : cookies.joined(separator: "; "))
    }
}
