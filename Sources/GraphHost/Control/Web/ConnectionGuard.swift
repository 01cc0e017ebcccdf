import HummingbirdCore
import Logging
import NIOCore
import Synchronization

/// Bounds the page server's connections against slow and idle clients (slowloris): at most `limit` connections are
/// open, and a connection must send its first request's head within `headDeadline`. When a new connection finds every
/// place taken, the oldest connection still waiting for its head is closed to make room, so a well-formed client gets
/// in while slow ones hold places; with no such connection the newcomer is closed. After the first request,
/// Hummingbird's idle timeout bounds the connection, and a WebSocket lives as long as its page.
final class ConnectionGuard: Sendable {
    let limit: Int
    let headDeadline: TimeAmount

    private struct Waiting {
        var order: Int
        var channel: any Channel
        var deadline: Scheduled<Void>?
    }
    private struct State {
        var open = 0
        var opened = 0
        var waiting: [ObjectIdentifier: Waiting] = [:]
    }
    private let state = Mutex(State())

    init(limit: Int = 256, headDeadline: TimeAmount = .seconds(10)) {
        self.limit = limit
        self.headDeadline = headDeadline
    }

    /// Takes a new connection in, making room if needed; false when it was closed instead.
    func admit(_ channel: any Channel) -> Bool {
        let id = ObjectIdentifier(channel)
        let (admitted, evicted): (Bool, (any Channel)?) = state.withLock { s in
            var evicted: (any Channel)?
            if s.open >= limit {
                guard let oldest = s.waiting.min(by: { $0.value.order < $1.value.order }) else { return (false, nil) }
                s.waiting[oldest.key] = nil
                evicted = oldest.value.channel
            }
            s.open += 1
            s.opened += 1
            s.waiting[id] = Waiting(order: s.opened, channel: channel)
            return (true, evicted)
        }
        evicted?.close(promise: nil)
        guard admitted else {
            channel.close(promise: nil)
            return false
        }
        // The deadline holds the channel weakly and is cancelled once the head arrives or the connection closes:
        // a closed connection's buffers go at once, not when its deadline would have passed.
        let deadline = channel.eventLoop.scheduleTask(in: headDeadline) { [weak channel] in
            if let channel { channel.close(promise: nil) }
        }
        state.withLock { $0.waiting[id]?.deadline = deadline }
        channel.closeFuture.whenComplete { _ in
            let left = self.state.withLock { s -> Waiting? in
                s.open -= 1
                return s.waiting.removeValue(forKey: id)
            }
            left?.deadline?.cancel()
        }
        return true
    }

    /// The connection's first request head has arrived: it no longer waits.
    func headArrived(_ channel: any Channel) {
        state.withLock { $0.waiting.removeValue(forKey: ObjectIdentifier(channel)) }?.deadline?.cancel()
    }

    /// A handler Hummingbird adds once a connection's first request head is decoded (and it is not a WebSocket
    /// upgrade); it tells the guard and passes everything on.
    final class HeadArrived: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = Any
        let connections: ConnectionGuard

        init(_ connections: ConnectionGuard) { self.connections = connections }

        func handlerAdded(context: ChannelHandlerContext) {
            connections.headArrived(context.channel)
        }
    }
}

/// A Hummingbird child channel whose connections pass `ConnectionGuard` before `inner` sets them up.
struct GuardedChildChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner
    let connections: ConnectionGuard

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard connections.admit(channel) else {
            return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
        }
        return inner.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async { await inner.handle(value: value, logger: logger) }
}
