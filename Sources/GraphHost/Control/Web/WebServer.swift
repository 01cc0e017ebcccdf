import Dispatch
import FoundationEssentials
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// The page in the browser (`run --http [ADDR:]PORT`): an HTTP server that serves the page (`WebPage`, kept in the
/// binary), the live graph as a download, the graph files beside the running one, and a WebSocket per open page
/// (`WebClient`). Every request is checked by `WebAccess` (token, Host, Origin) in `RequestScreen`, and connections
/// are bounded by `ConnectionGuard`. Off unless asked; 127.0.0.1 by default.
///
/// Built on Hummingbird (with hummingbird-websocket): it runs on SwiftNIO, a well-kept server stack, and needs no
/// more of Foundation than graphhost already loads (FoundationEssentials), which keeps a run's resident memory down.
public final class WebServer: ControlSurface, Sendable {
    public let host: String
    public let requestedPort: Int
    /// Where the page's URL is written (standard error by default); tests read it there.
    private let announce: @Sendable (String) -> Void

    private struct Shared {
        var group: ServiceGroup?
        var loops: MultiThreadedEventLoopGroup?
        var finished: DispatchSemaphore?
        var access: WebAccess?
        var clients: [ObjectIdentifier: WebClient] = [:]
        var url: String?
    }
    private let shared = Mutex(Shared())
    /// The server's own log: only what stops it. What a client does wrong (a refused upgrade, a connection closed
    /// for being slow) is the client's affair and must not let anyone flood graphhost's log.
    private static let logger = {
        var logger = Logger(label: "graphhost.http")
        logger.logLevel = .critical
        return logger
    }()

    public init(
        host: String = "127.0.0.1", port: Int,
        announce: @escaping @Sendable (String) -> Void = { writeToStandardError($0 + "\n") }
    ) {
        self.host = host
        self.requestedPort = port
        self.announce = announce
    }

    /// The page's URL with its token, once started.
    public var url: String? { shared.withLock { $0.url } }

    /// `[ADDR:]PORT` as `run --http` takes it: (address, port).
    public static func parseAddress(_ text: String) -> (host: String, port: Int)? {
        let (name, port): (String, Int?)
        if let colon = text.lastIndex(of: ":") {
            let host = text[..<colon]
            name = String(host.hasPrefix("[") && host.hasSuffix("]") ? host.dropFirst().dropLast() : host)
            port = Int(text[text.index(after: colon)...])
        } else {
            (name, port) = ("127.0.0.1", Int(text))
        }
        guard let port, (0...65535).contains(port), !name.isEmpty else { return nil }
        return (name, port)
    }

    public func start(control: LiveControl) throws {
        let version = WebPage.version
        let folder = control.withSession { $0.graph.document.file.deletingLastPathComponent() }
        let connections = ConnectionGuard()
        let access: @Sendable () -> WebAccess? = { self.shared.withLock { $0.access } }
        let router = Router()
        router.get("/") { request, _ in
            if request.uri.queryParameters["token"] != nil {
                // The token moves into a cookie; the address bar keeps a URL without it.
                var response = Response(status: .seeOther, headers: [.location: "/"])
                if let access = self.shared.withLock({ $0.access }) { response.headers[.setCookie] = access.cookie }
                return response
            }
            return Self.file(WebPage.index)
        }
        router.get("/page/:name") { _, context in
            guard let name = context.parameters.get("name"), let file = WebPage.files[name] else {
                return Response(
                    status: .notFound, headers: [.contentType: "text/plain"], body: Self.body("no such file"))
            }
            return Self.file(file)
        }
        router.get("/graph.json") { _, _ in
            let text = control.withSession { $0.graph.document.savedJSON(folder: folder).text() + "\n" }
            return Response(
                status: .ok,
                headers: [
                    .contentType: "application/json", .contentDisposition: "attachment; filename=\"graph.json\"",
                    .cacheControl: "no-store",
                ], body: Self.body(text))
        }
        router.get("/graphs") { _, _ in
            let names = GraphFiles.list(folder: folder.path)
            return Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                body: Self.body(JSONValue.array(names.map(JSONValue.string)).compact))
        }
        // One thread serves every connection and runs the pages' tasks (`EventLoopTaskExecutor`).
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let executor = EventLoopTaskExecutor(loops.next())
        let started = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let shouldUpgrade:
            @Sendable (HTTPRequest, any Channel, Logger) async throws -> ShouldUpgradeResult<
                WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
            > = { request, channel, _ in
                // `RequestScreen` has checked the token, Host and Origin.
                guard request.path?.split(separator: "?").first == "/ws" else { return .dontUpgrade }
                return .upgrade([:]) { inbound, outbound, _ in
                    try await self.serve(
                        inbound: inbound, outbound: outbound, channel: channel, executor: executor, control: control,
                        version: version, folder: folder.path)
                }
            }
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(idleTimeout: .seconds(60), httpDecoderConfiguration: .init(maxHeaderListSize: 16 * 1024)),
            ws: .init(maxFrameSize: 1 << 16))
        let app = Application(
            router: router,
            server: HTTPServerBuilder { responder in
                GuardedChildChannel(
                    inner: HTTP1WebSocketUpgradeChannel(
                        responder: responder, configuration: configuration, shouldUpgrade: shouldUpgrade),
                    connections: connections, access: access)
            },
            // The kernel's queue of connections not yet accepted holds a burst of strangers' connections beside a
            // page's; an overflowing queue would drop the page's, for seconds at a time.
            configuration: .init(
                address: .hostname(host, port: requestedPort), serverName: nil, backlog: Self.backlog),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                let host = self.host
                let access = WebAccess(bindAddress: host, port: port)
                let shownHost = ["0.0.0.0", "::"].contains(host) ? "127.0.0.1" : WebAccess.bracketed(host)
                let url = "http://\(shownHost):\(port)/?token=\(access.token)"
                self.shared.withLock {
                    $0.access = access
                    $0.url = url
                }
                self.announce("the page: \(url)")
                if !["127.0.0.1", "localhost", "::1"].contains(host) {
                    self.announce(
                        "warning: the page listens on \(host), beyond this machine: anyone who has the URL with its "
                            + "token can control graphhost")
                }
                started.signal()
            },
            eventLoopGroupProvider: .shared(loops),
            logger: Self.logger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: Self.logger))
        let finished = DispatchSemaphore(value: 0)
        Task {
            do { try await group.run() } catch {
                failure.withLock { $0 = "\(error)" }
                started.signal()
            }
            finished.signal()
        }
        shared.withLock {
            $0.group = group
            $0.loops = loops
            $0.finished = finished
        }
        control.addListener { event in
            for client in self.shared.withLock({ Array($0.clients.values) }) { client.event(event) }
        }
        guard started.wait(timeout: .now() + 10) == .success else {
            stop()
            throw SocketError.other("the page's server at \(host):\(requestedPort) did not start within 10 s")
        }
        if let reason = failure.withLock({ $0 }) {
            stop()
            throw SocketError.other("cannot serve the page on \(host):\(requestedPort): \(reason)")
        }
    }

    public func stop() {
        let (group, loops, finished, clients) = shared.withLock { s in
            defer { (s.clients, s.group, s.loops) = ([:], nil, nil) }
            return (s.group, s.loops, s.finished, Array(s.clients.values))
        }
        for client in clients { client.close() }
        guard let group, let finished else { return }
        Task { await group.triggerGracefulShutdown() }
        // The pages' connections close with the server; a page that does not answer is not waited for long.
        if finished.wait(timeout: .now() + 2) == .success { try? loops?.syncShutdownGracefully() }
    }

    /// Serves one page's WebSocket until it closes.
    private func serve(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: any Channel,
        executor: EventLoopTaskExecutor, control: LiveControl, version: String, folder: String
    ) async throws {
        let client = WebClient(control: control, version: version, folder: folder)
        shared.withLock { $0.clients[ObjectIdentifier(client)] = client }
        defer {
            shared.withLock { $0.clients[ObjectIdentifier(client)] = nil }
            client.close()
        }
        client.send(client.graph())
        client.startFeeds(on: channel)
        try await withTaskExecutorPreference(executor) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await text in client.outgoing { try await outbound.write(.text(text)) }
                }
                group.addTask {
                    for try await message in inbound.messages(maxSize: 1 << 16) {
                        if case .text(let text) = message { await client.receive(text) }
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    static func file(_ file: WebPage.File) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: file.type, .cacheControl: "no-store", .init("X-Content-Type-Options")!: "nosniff",
                .init("X-Frame-Options")!: "DENY",
                .contentSecurityPolicy: "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
            ], body: body(file.text))
    }

    /// The listening socket's backlog (Linux bounds it by net.core.somaxconn, 4096 on Debian 12).
    static let backlog = 4096

    static func body(_ text: String) -> ResponseBody { ResponseBody(byteBuffer: ByteBuffer(string: text)) }
}
