import Foundation
import Synchronization

/// A Unix-socket command server: one command per line in, one JSON reply per line out, several clients at
/// once. A client that sends `subscribe` also receives every published event as a JSON line. The socket lives in an owner-only folder with mode 0600; a stale socket is replaced, a live one is left alone; lines, the command rate and the number of clients are bounded.
public final class CommandServer: Sendable {
    public let path: String
    private let handler: @Sendable (String) -> String
    /// What the serving thread shares with the threads that publish events and stop it.
    private struct Shared {
        var listener: Int32 = -1
        var stopping = false
        var thread: JoinableThread?
        var events: [String] = []
    }
    private let shared = Mutex(Shared())
    public static let maxLineLength = 4096
    /// Commands one client may send per second (a burst of as many is allowed), and clients at once.
    public static let commandsPerSecond = 100.0
    public static let maxClients = 64

    /// The default socket: $XDG_RUNTIME_DIR/graphhost/NAME.sock (or /tmp/graphhost-UID/NAME.sock).
    public static func defaultPath(name: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let base = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 }
        let dir = base.map { $0 + "/graphhost" } ?? "/tmp/graphhost-\(getuid())"
        return dir + "/" + name + ".sock"
    }

    public init(path: String, handler: @escaping @Sendable (String) -> String) {
        self.path = path
        self.handler = handler
    }

    public func start() throws {
        let dir = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        chmod(dir, 0o700)
        if FileManager.default.fileExists(atPath: path) {
            if Self.isAlive(path) { throw CommandError("another graphhost is listening on \(path); choose another --name") }
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CommandError("cannot create a socket: \(String(cString: strerror(errno)))") }
        var address = Self.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, chmod(path, 0o600) == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw CommandError("cannot listen on \(path): \(String(cString: strerror(errno)))")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let thread = JoinableThread(name: "graphhost-control") { [self] in serve(listener: fd) }
        shared.withLock { shared in
            shared.listener = fd
            shared.thread = thread
        }
    }

    public func stop() {
        let (thread, listener) = shared.withLock { shared in
            defer { shared.thread = nil }
            shared.stopping = true
            return (shared.thread, shared.listener)
        }
        guard let thread else { return }
        thread.join()
        close(listener)
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
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
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
    public func publish(_ event: [String: Any]) {
        let line = Self.json(event)
        shared.withLock { $0.events.append(line) }
    }

    private struct Client {
        var fd: Int32
        var pending: [UInt8] = []
        var discarding = false
        var subscribed = false
        /// Token bucket for the command rate.
        var tokens = CommandServer.commandsPerSecond
        var refilled = Date()
    }

    private func serve(listener: Int32) {
        var clients: [Client] = []
        while !shared.withLock({ $0.stopping }) {
            let waiting = shared.withLock { shared in
                defer { shared.events.removeAll() }
                return shared.events
            }
            var gone: Set<Int32> = []
            for client in clients where client.subscribed {
                for event in waiting where !reply(client.fd, event) { gone.insert(client.fd) }
            }
            for fd in gone { close(fd) }
            clients.removeAll { gone.contains($0.fd) }
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)] + clients.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), 50) > 0 else { continue }
            if fds[0].revents & Int16(POLLIN) != 0 {
                let fd = accept(listener, nil, nil)
                if fd >= 0 && clients.count >= Self.maxClients {
                    _ = reply(fd, Self.error("too many clients (\(Self.maxClients))"))
                    close(fd)
                } else if fd >= 0 {
                    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                    clients.append(Client(fd: fd))
                }
            }
            var closed: Set<Int32> = []
            for (i, entry) in fds.dropFirst().enumerated() where entry.revents != 0 {
                if !read(&clients[i]) { closed.insert(clients[i].fd) }
            }
            for fd in closed { close(fd) }
            clients.removeAll { closed.contains($0.fd) }
        }
        clients.forEach { close($0.fd) }
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
                    let line = String(decoding: client.pending, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                    let now = Date()
                    client.tokens = min(Self.commandsPerSecond, client.tokens + now.timeIntervalSince(client.refilled) * Self.commandsPerSecond)
                    client.refilled = now
                    if line.isEmpty {
                    } else if client.tokens < 1 {
                        if !reply(client.fd, Self.error("too many commands (at most \(Int(Self.commandsPerSecond)) a second); this one was ignored")) { return false }
                    } else if line == "subscribe" {
                        client.tokens -= 1
                        client.subscribed = true
                        if !reply(client.fd, Self.json(["ok": true, "subscribed": true])) { return false }
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

    /// A JSON error reply.
    public static func error(_ message: String) -> String {
        json(["ok": false, "error": message])
    }

    /// Serializes a reply object as one line of JSON.
    public static func json(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{\"ok\":false}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
