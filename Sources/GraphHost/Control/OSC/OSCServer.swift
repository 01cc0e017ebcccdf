import CLo
import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// Open Sound Control over UDP: each message under `/graphhost/` becomes one command for `LiveControl.perform`
/// (`OSCRequest`), answered with `/graphhost/reply ss ADDRESS JSON` to the sender. `/graphhost/subscribe` makes an
/// address (the sender, another port of its host, or an osc.udp URL on its host) receive every event as
/// `/graphhost/event s JSON` and every reply; `/graphhost/meters RATE` also sends them the levels of every meter
/// that is on, as `/graphhost/meter` messages (`meterMessages`), RATE times a second. Bound to 127.0.0.1 unless
/// another host is given.
///
/// Messages are read and written with liblo; the socket is graphhost's own, because liblo 0.31's servers bind every
/// interface and cannot be limited to loopback.
public final class OSCServer: ControlSurface, Sendable {
    public let host: String
    public let requestedPort: Int
    public static let maxDatagram = 4096
    /// Addresses that may subscribe at once.
    public static let maxSubscribers = 16

    private struct Shared {
        var socket: Int32 = -1
        var stopping = false
        var thread: JoinableThread?
        var local: UDPEndpoint?
        var subscribers: [UDPEndpoint] = []
        var meters = FeedSchedule<Feed>()
    }
    private let shared = Mutex(Shared())
    private static let logger = Logger(label: "graphhost.osc")

    /// A server for `host` (a numeric address or a name; 127.0.0.1 by default) and `port` (0: any free port).
    public init(host: String = "127.0.0.1", port: Int) {
        self.host = host
        self.requestedPort = port
    }

    /// Where the server listens, once started.
    public var endpoint: UDPEndpoint? { shared.withLock { $0.local } }

    public func start(control: LiveControl) throws {
        guard (0...65535).contains(requestedPort) else {
            throw SocketError.other("OSC port \(requestedPort) is not 0…65535")
        }
        let wanted = try UDPEndpoint.resolve(host: host, port: requestedPort, passive: true)
        let fd = socket(wanted.family, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError.system("cannot create an OSC socket", errno: errno) }
        guard wanted.withSockaddr({ bind(fd, $0, wanted.length) }) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw SocketError.other(
                "cannot listen for OSC on \(wanted): "
                    + "\(reason)\(errno == EADDRINUSE ? " (choose another --osc-port)" : "")"
            )
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let local =
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    getsockname(fd, $0, &length) == 0 ? UDPEndpoint($0) : nil
                }
            } ?? wanted
        shared.withLock { shared in
            shared.socket = fd
            shared.local = local
        }
        control.addListener { [weak self] event in
            self?.sendToSubscribers(
                OSCMessage(address: Self.prefix + "event", arguments: [.string(event.line)]), except: nil)
        }
        let thread = JoinableThread(name: "graphhost-osc") { [self] in serve(socket: fd, control: control) }
        shared.withLock { $0.thread = thread }
        Self.logger.info("OSC: listening on udp \(local)")
    }

    public func stop() {
        let (thread, fd) = shared.withLock { shared in
            defer { shared.thread = nil }
            shared.stopping = true
            return (shared.thread, shared.socket)
        }
        guard let thread else { return }
        thread.join()
        shared.withLock { shared in
            shared.socket = -1
            shared.subscribers.removeAll()
        }
        close(fd)
    }

    private static let prefix = OSCRequest.prefix

    private func serve(socket fd: Int32, control: LiveControl) {
        var buffer = [UInt8](repeating: 0, count: Self.maxDatagram)
        while !shared.withLock({ $0.stopping }) {
            sendMeters(control)
            var request = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let timeout = shared.withLock { $0.meters.timeout(cap: 50) }
            guard poll(&request, 1, timeout) > 0 else { continue }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let (size, sender) = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    let n = recvfrom(fd, &buffer, buffer.count, Int32(MSG_TRUNC | MSG_DONTWAIT), address, &length)
                    return (n, n >= 0 ? UDPEndpoint(address) : nil)
                }
            }
            guard size >= 0, let sender else { continue }
            let (address, reply): (String, String)
            if size > buffer.count {
                (address, reply) = (
                    "", ControlError.reply("OSC message of \(size) bytes is longer than \(Self.maxDatagram)")
                )
            } else {
                (address, reply) = answer(Array(buffer[0..<size]), from: sender, control: control)
            }
            let message = OSCMessage(address: Self.prefix + "reply", arguments: [.string(address), .string(reply)])
            send(message, to: sender)
            sendToSubscribers(message, except: sender)
        }
    }

    /// Carries out one datagram; returns its address and the JSON reply.
    private func answer(_ datagram: [UInt8], from sender: UDPEndpoint, control: LiveControl) -> (String, String) {
        var address = ""
        // A datagram's sender is a stranger: the files it names are confined, and its replies name no folder.
        let files = FileAccess.remote(
            graphFolder: control.withSession { $0.graph.document.file.deletingLastPathComponent().path })
        do {
            let message = try OSCMessage(datagram: datagram)
            address = message.address
            switch try OSCRequest.parse(message) {
            case .control(let request):
                return (address, try control.perform(request, files: files).reply)
            case .subscribe(let target):
                let subscriber = try resolve(target, sender: sender)
                try shared.withLock { shared in
                    guard !shared.subscribers.contains(subscriber) else { return }
                    guard shared.subscribers.count < Self.maxSubscribers else {
                        throw OSCError.invalid(
                            "too many OSC subscribers (\(Self.maxSubscribers)); unsubscribe one first")
                    }
                    shared.subscribers.append(subscriber)
                }
                return (
                    address, JSONValue.object([("ok", .bool(true)), ("subscribed", .string("\(subscriber)"))]).compact
                )
            case .meters(let rate):
                shared.withLock { shared in
                    _ = shared.meters.remove(.meters)
                    if rate > 0 { shared.meters.add(.meters, rate: rate) }
                }
                return (address, JSONValue.object([("ok", .bool(true)), ("meters", .number(rate))]).compact)
            case .unsubscribe(let target):
                let subscriber = try resolve(target, sender: sender)
                let removed = shared.withLock { shared in
                    defer { shared.subscribers.removeAll { $0 == subscriber } }
                    return shared.subscribers.contains(subscriber)
                }
                guard removed else { throw OSCError.invalid("\(subscriber) is not subscribed") }
                return (
                    address,
                    JSONValue.object([("ok", .bool(true)), ("unsubscribed", .string("\(subscriber)"))]).compact
                )
            }
        } catch {
            return (address, files.redact(ControlError.reply("\(error)")))
        }
    }

    /// Sends the subscribers the meters' levels when they are due.
    private func sendMeters(_ control: LiveControl) {
        guard !shared.withLock({ $0.meters.takeDue() }).isEmpty,
            case .meters(let meters) = try? control.read(.meters)
        else { return }
        for message in Self.meterMessages(meters) { sendToSubscribers(message, except: nil) }
    }

    /// `/graphhost/meter s NODE` followed by each channel's peak and RMS (dBFS, f; silence is -inf) and clip count
    /// (i), one message per metered node.
    static func meterMessages(_ meters: [RunStatus.Meter]) -> [OSCMessage] {
        meters.map { meter in
            OSCMessage(
                address: prefix + "meter",
                arguments: [.string(meter.node)]
                    + meter.channels.flatMap { [.float(Float($0.peak)), .float(Float($0.rms)), .int(Int64($0.clips))] })
        }
    }

    /// The address a subscription names; only the sender's own host may be named.
    private func resolve(_ target: OSCRequest.OSCReturnAddress, sender: UDPEndpoint) throws -> UDPEndpoint {
        switch target {
        case .sender: return sender
        case .port(let port): return sender.with(port: port)
        case .url(let url):
            guard lo_url_get_protocol_id(url) == LO_UDP else {
                throw OSCError.invalid("'\(url)' is not an osc.udp://HOST:PORT URL")
            }
            let host = Self.take(lo_url_get_hostname(url))
            let port = Self.take(lo_url_get_port(url))
            guard !host.isEmpty, let number = Int(port), (1...65535).contains(number) else {
                throw OSCError.invalid("'\(url)' is not an osc.udp://HOST:PORT URL")
            }
            let endpoint = try UDPEndpoint.resolve(host: host, port: number, family: sender.family)
            guard endpoint.sameHost(sender) else {
                throw OSCError.invalid(
                    "a subscription may name only the sender's own host (\(sender.host)), not \(endpoint.host)")
            }
            return endpoint
        }
    }

    /// A string liblo allocated, freed ("" for none).
    private static func take(_ text: UnsafeMutablePointer<CChar>?) -> String {
        guard let text else { return "" }
        defer { free(text) }
        return String(cString: text)
    }

    private func send(_ message: OSCMessage, to endpoint: UDPEndpoint) {
        let bytes = message.encoded()
        shared.withLock { shared in
            guard shared.socket >= 0 else { return }
            _ = endpoint.withSockaddr { address in
                bytes.withUnsafeBytes {
                    sendto(shared.socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT), address, endpoint.length)
                }
            }
        }
    }

    private func sendToSubscribers(_ message: OSCMessage, except sender: UDPEndpoint?) {
        for subscriber in shared.withLock({ $0.subscribers }) where subscriber != sender {
            send(message, to: subscriber)
        }
    }
}
