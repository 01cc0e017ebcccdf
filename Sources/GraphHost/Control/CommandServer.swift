import FoundationEssentials
import Glibc
import GraphHostCore
import Synchronization

/// A Unix-socket command server: one command per line in, one JSON reply per line out, several clients at
/// once, each served by a thread of its own (a command that takes long, such as a `load` warming up a network
/// stream, holds up only its own client). A client that sends `subscribe` also receives every published event as a
/// JSON line; `subscribe FEED RATE` sends it a feed's updates (`FeedReading`) at that rate, dropping an update
/// rather than waiting when the client does not read. The socket lives in an owner-only folder with mode 0600; a
/// stale socket is replaced, a live one is left alone; lines, the command rate and the number of clients are bounded.
public final class CommandServer: Sendable {
    public let path: String
    private let handler: @Sendable (String) -> String
    private let feeds: (any FeedSource)?
    /// What the threads share: the listener, the clients and their event queues.
    private struct Shared {
        var listener: Int32 = -1
        /// A pipe `stop` writes to: the listening thread waits on its read end and the listener, with no timeout.
        var stopPipe: [Int32] = [-1, -1]
        var stopping = false
        var thread: JoinableThread?
        var clients: [Int32: ClientLink] = [:]
        var nextClient: Int32 = 0
    }
    /// A client as the publishing side sees it.
    private struct ClientLink {
        var thread: JoinableThread?
        var subscribed = false
        var events: [String] = []
        /// Wakes the client's thread when an event is queued for it or the server stops.
        let wakeup = LoopWakeup()
        /// The client hung up or the server stopped: its thread has ended or is ending.
        var finished = false
    }
    private let shared = Mutex(Shared())
    public static let maxLineLength = 4096
    /// Commands one client may send per second (a burst of as many is allowed), and clients at once.
    public static let commandsPerSecond = 100.0
    public static let maxClients = 64

    /// The default socket: $XDG_RUNTIME_DIR/graphhost/NAME.sock (or /tmp/graphhost-UID/NAME.sock).
    public static func defaultPath(name: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        defaultFolder(environment: environment) + "/" + name + ".sock"
    }

    /// Where runs put their sockets unless told otherwise.
    public static func defaultFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let base = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 }
        return base.map { $0 + "/graphhost" } ?? "/tmp/graphhost-\(getuid())"
    }

    public init(path: String, feeds: (any FeedSource)? = nil, handler: @escaping @Sendable (String) -> String) {
        self.path = path
        self.feeds = feeds
        self.handler = handler
    }

    public func start() throws {
        let dir = URL(fileURLWithPath: path).deletingLastPathComponent().path
        // A folder made here is the owner's alone; one that exists (`--socket /tmp/x.sock`) keeps its permissions, and
        // the socket's own mode 0600 keeps others out.
        if !FileManager.default.fileExists(atPath: dir) {
            try FileManager.default.createDirectory(
                atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            chmod(dir, 0o700)
        }
        if FileManager.default.fileExists(atPath: path) {
            if Self.isAlive(path) { throw SocketError.taken(path) }
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError.system("cannot create a socket", errno: errno) }
        var address = Self.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, chmod(path, 0o600) == 0, listen(fd, 16) == 0 else {
            let code = errno
            close(fd)
            throw SocketError.system("cannot listen on \(path)", errno: code)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var stopPipe: [Int32] = [-1, -1]
        guard pipe(&stopPipe) == 0 else {
            let code = errno
            close(fd)
            throw SocketError.system("cannot create a pipe", errno: code)
        }
        shared.withLock { shared in
            shared.listener = fd
            shared.stopPipe = stopPipe
        }
        for end in stopPipe { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let stopEvent = stopPipe[0]
        let thread = JoinableThread(name: "graphhost-control") { [self] in accept(listener: fd, stopEvent: stopEvent) }
        shared.withLock { $0.thread = thread }
    }

    /// Stops accepting, waits for every client's thread (each finishes the command it is carrying out) and removes
    /// the socket.
    public func stop() {
        let (thread, listener, stopPipe) = shared.withLock { shared in
            defer { shared.thread = nil }
            shared.stopping = true
            return (shared.thread, shared.listener, shared.stopPipe)
        }
        guard let thread else { return }
        var byte: UInt8 = 1
        _ = write(stopPipe[1], &byte, 1)
        for client in shared.withLock({ $0.clients.values.map(\.wakeup) }) { client.signal() }
        thread.join()
        for client in shared.withLock({ $0.clients.values.compactMap(\.thread) }) { client.join() }
        close(listener)
        stopPipe.forEach { _ = close($0) }
        unlink(path)
    }

    static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// Connects a client to the socket at `path`; returns the descriptor, or -1 (errno set).
    public static func connectClient(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = address(path)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            let saved = errno
            close(fd)
            errno = saved
            return -1
        }
        return fd
    }

    static func isAlive(_ path: String) -> Bool {
        let fd = connectClient(path)
        if fd >= 0 { close(fd) }
        return fd >= 0
    }

    /// Queues an event (a JSON line) for every subscribed client.
    public func publish(_ event: ControlEvent) {
        let line = event.line
        shared.withLock { shared in
            for key in shared.clients.keys where shared.clients[key]!.subscribed {
                shared.clients[key]!.events.append(line)
                shared.clients[key]!.wakeup.signal()
            }
        }
    }

    /// The listening thread: accepts clients and starts a thread for each.
    private func accept(listener: Int32, stopEvent: Int32) {
        while !shared.withLock({ $0.stopping }) {
            var entries = [
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stopEvent, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&entries, 2, -1) > 0, entries[1].revents == 0 else { continue }
            let fd = Glibc.accept(listener, nil, nil)
            guard fd >= 0 else { continue }
            let key: Int32? = shared.withLock { shared in
                shared.clients = shared.clients.filter { !$0.value.finished }
                guard shared.clients.count < Self.maxClients else { return nil }
                shared.nextClient += 1
                shared.clients[shared.nextClient] = ClientLink()
                return shared.nextClient
            }
            guard let key else {
                _ = reply(fd, Self.error("too many clients (\(Self.maxClients))"))
                close(fd)
                continue
            }
            let thread = JoinableThread(name: "graphhost-client") { [self] in serve(client: fd, key: key) }
            shared.withLock { $0.clients[key]?.thread = thread }
        }
    }

    /// A client's thread: answers its lines in order and sends it events (as soon as they are published) and its
    /// feeds' updates (when due), until it hangs up or the server stops. With no feed it sleeps until one of those.
    private func serve(client fd: Int32, key: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var client = Client(fd: fd, key: key)
        guard let wakeup = shared.withLock({ $0.clients[key]?.wakeup }) else {
            close(fd)
            return
        }
        while true {
            let (stopping, events) = shared.withLock { shared -> (Bool, [String]) in
                defer { shared.clients[key]?.events.removeAll() }
                return (shared.stopping, shared.clients[key]?.events ?? [])
            }
            if stopping || !events.allSatisfy({ reply(fd, $0) }) { break }
            sendDueUpdates(&client)
            var entries = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeup.fd, events: Int16(POLLIN), revents: 0),
            ]
            let timeout = client.schedule.feeds.isEmpty ? -1 : client.schedule.timeout(cap: Int32.max)
            guard poll(&entries, 2, timeout) >= 0 || errno == EINTR else { break }
            if entries[1].revents != 0 { wakeup.drain() }
            if entries[0].revents != 0 && !read(&client) { break }
        }
        close(fd)
        for feed in client.schedule.feeds { feeds?.unwatch(feed) }
        // The accepting thread forgets it when the next client arrives; `stop` joins it.
        shared.withLock { shared in
            shared.clients[key]?.finished = true
            shared.clients[key]?.subscribed = false
            shared.clients[key]?.events.removeAll()
        }
    }

    /// Sends the updates that are due; one the client has no room for is dropped (the next goes out on time).
    private func sendDueUpdates(_ client: inout Client) {
        guard let feeds else { return }
        for feed in client.schedule.takeDue() {
            guard let reading = try? feeds.read(feed) else { continue }
            var entry = pollfd(fd: client.fd, events: Int16(POLLOUT), revents: 0)
            if poll(&entry, 1, 0) > 0 && entry.revents & Int16(POLLOUT) != 0 {
                _ = reply(client.fd, reading.compactJSON(time: Double(MonotonicClock.nanos()) / 1e9))
            }
        }
    }

    /// Carries out `subscribe ...` or `unsubscribe ...`, answering with a JSON line.
    private func subscribe(_ request: (subscription: Subscription, on: Bool), _ client: inout Client) -> String {
        let key = client.key
        guard let feed = request.subscription.feed else {
            shared.withLock { $0.clients[key]?.subscribed = request.on }
            return JSONValue.object([("ok", .bool(true)), ("subscribed", .bool(request.on))]).compact
        }
        guard let feeds else { return Self.error("this socket has no feeds") }
        if request.on {
            if !client.schedule.feeds.contains(feed) {
                do { try feeds.watch(feed) } catch { return error.reply }
            }
            client.schedule.add(feed, rate: request.subscription.rate)
        } else {
            guard client.schedule.remove(feed) else { return Self.error("not subscribed to \(feed)") }
            feeds.unwatch(feed)
        }
        var members: [(key: String, value: JSONValue)] = [
            ("ok", .bool(true)), ("feed", .string(feed.description)), ("subscribed", .bool(request.on)),
        ]
        if request.on { members.append(("rate", .number(request.subscription.rate))) }
        return JSONValue.object(members).compact
    }

    private struct Client {
        var fd: Int32
        var key: Int32
        var pending: [UInt8] = []
        var discarding = false
        /// Token bucket for the command rate.
        var tokens = CommandServer.commandsPerSecond
        var refilled = Date()
        var schedule = FeedSchedule<Feed>()
    }

    /// Reads what a client sent and answers each complete line; false when the client is gone.
    private func read(_ client: inout Client) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = Glibc.read(client.fd, &buffer, buffer.count)
        if n <= 0 { return n < 0 && errno == EAGAIN }
        for byte in buffer[0..<n] {
            if byte == UInt8(ascii: "\n") {
                if client.discarding {
                    client.discarding = false
                } else {
                    let line = String(decoding: client.pending, as: UTF8.self).trimmingWhitespace()
                    let now = Date()
                    client.tokens = min(
                        Self.commandsPerSecond,
                        client.tokens + now.timeIntervalSince(client.refilled) * Self.commandsPerSecond)
                    client.refilled = now
                    if line.isEmpty {
                    } else if client.tokens < 1 {
                        if !reply(
                            client.fd,
                            Self.error(
                                "too many commands (at most \(Int(Self.commandsPerSecond)) "
                                    + "a second); this one was ignored"
                            ))
                        {
                            return false
                        }
                    } else if let request = Self.subscription(line) {
                        client.tokens -= 1
                        let answer: String
                        switch request {
                        case .success(let request): answer = subscribe(request, &client)
                        case .failure(let error): answer = error.reply
                        }
                        if !reply(client.fd, answer) { return false }
                    } else {
                        client.tokens -= 1
                        if !reply(client.fd, handler(line)) { return false }
                    }
                }
                client.pending.removeAll(keepingCapacity: true)
            } else if !client.discarding {
                client.pending.append(byte)
                if client.pending.count > Self.maxLineLength {
                    client.pending.removeAll()
                    client.discarding = true
                    if !reply(client.fd, Self.error("line longer than \(Self.maxLineLength) bytes")) { return false }
                }
            }
        }
        return true
    }

    /// Writes a reply; a client that does not read (its buffer full) or has gone is dropped. MSG_NOSIGNAL: a client
    /// that hung up must not raise SIGPIPE in the host.
    private func reply(_ fd: Int32, _ json: String) -> Bool {
        let bytes = Array((json + "\n").utf8)
        return bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// `subscribe ...` or `unsubscribe ...` read, or nil for any other line.
    static func subscription(_ line: String) -> Result<(subscription: Subscription, on: Bool), ControlError>? {
        do { return try Subscription.parse(line).map { .success($0) } } catch { return .failure(.unreadable(error)) }
    }

    /// A JSON error reply.
    static func error(_ message: String) -> String { ControlError.reply(message) }
}
