import Glibc
import Synchronization

/// A UDP socket bound to an RTP session's address and port (joining it when it is a multicast group); `read` gives
/// one datagram a call. Made from a `SAPQuery`, it first listens for the session's announcement, then receives the
/// session announced, following it when a new announcement moves it (its port, address or format) and waiting for it
/// again after a deletion. `receive` tells where each datagram came from, and an announced session's packets may come
/// only from the announcement's addresses. `cancel` wakes a waiting read, which then reports the end.
public final class RTPPacketSource: ByteSource, Sendable {
    public let name: String
    public let counters: RTPReceiveCounters
    /// Whether the sender's clock is followed (`ClockFollower`).
    public let followsClock: Bool
    private struct State {
        var socket: Int32 = -1
        var session: RTPSession?
        /// The announced session followed (its name), once one was found.
        var announced: String?
        /// Counts the sessions opened: a session opened again after a deletion starts afresh.
        var generation = 0
        /// The addresses an announced session's packets may come from (nil: any).
        var origins: [UInt32]?
    }
    private let state: Mutex<State>
    private let query: SAPQuery?
    private let announcements: Int32
    private let cancelled = Atomic<Bool>(false)

    public init(session: RTPSession, url: String, counters: RTPReceiveCounters = RTPReceiveCounters()) throws {
        self.counters = counters
        name = url
        followsClock = session.followsClock
        query = nil
        announcements = -1
        let socket = try UDPSocket.listen(address: session.address, port: session.port, url: url)
        state = Mutex(State(socket: socket, session: session))
    }

    /// Listens for the announcements `query` asks for; the session is opened when one names it.
    public init(discovering query: SAPQuery, url: String, counters: RTPReceiveCounters = RTPReceiveCounters()) throws {
        self.counters = counters
        name = url
        followsClock = query.followsClock
        self.query = query
        announcements = try UDPSocket.listen(
            address: query.address, port: query.port, groups: SAPQuery.defaultGroups, url: url)
        state = Mutex(State())
    }

    deinit {
        state.withLock { if $0.socket >= 0 { close($0.socket) } }
        if announcements >= 0 { close(announcements) }
    }

    /// The session received now, as given or announced (nil while an announced one is awaited).
    public var session: RTPSession? { state.withLock { $0.session } }

    /// The session, how many sessions were opened so far (a new one, or the same one again, starts afresh), and the
    /// IPv4 addresses (network order) its packets may come from (nil: any).
    var current: (session: RTPSession?, generation: Int, origins: [UInt32]?) {
        state.withLock { ($0.session, $0.generation, $0.origins) }
    }

    /// The name of the announced session followed (nil for a fixed session, or before one was announced).
    public var announcedName: String? { state.withLock { $0.announced } }

    /// The next datagram of the session, waiting for it; 0 once cancelled.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try receive(into: buffer).count }

    /// The next datagram of the session and the address and port it came from, waiting for it; 0 once cancelled.
    func receive(into buffer: UnsafeMutableRawBufferPointer) throws -> (count: Int, from: RTPSender.Address) {
        while !cancelled.load(ordering: .acquiring) {
            let socket = state.withLock { $0.socket }
            var polls = [
                pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: announcements, events: Int16(POLLIN), revents: 0),
            ]
            // A bounded wait, so a cancel is seen even if no datagram comes.
            guard Glibc.poll(&polls, 2, 100) > 0 else { continue }
            if polls[1].revents & Int16(POLLIN) != 0 {
                try takeAnnouncement()
                // A session moved or ended: its old socket is closed.
                if state.withLock({ $0.socket }) != socket { continue }
            }
            guard polls[0].revents & Int16(POLLIN) != 0 else { continue }
            var from = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let n = withUnsafeMutablePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(socket, buffer.baseAddress, buffer.count, 0, $0, &length)
                }
            }
            if n > 0 { return (n, RTPSender.Address(from)) }
            if n < 0 && errno != EINTR && errno != EAGAIN {
                throw StreamError.network(name, "receive: \(String(cString: strerror(errno)))")
            }
        }
        return (0, RTPSender.Address(address: 0, port: 0))
    }

    /// Reads one announcement and follows it when it is about the session asked for.
    private func takeAnnouncement() throws {
        var bytes = [UInt8](repeating: 0, count: 4096)
        var from = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let n = bytes.withUnsafeMutableBytes { b in
            withUnsafeMutablePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(announcements, b.baseAddress, b.count, 0, $0, &length)
                }
            }
        }
        guard n > 0,
            let announcement = bytes.withUnsafeBytes({ SAPAnnouncement(UnsafeRawBufferPointer(rebasing: $0[..<n])) })
        else { return }
        let followed = state.withLock { $0.announced }
        guard announcement.name == (query?.sessionName ?? followed ?? announcement.name) else { return }
        if announcement.isDeletion {
            state.withLock {
                if $0.socket >= 0 { close($0.socket) }
                $0.socket = -1
                $0.session = nil
            }
            return
        }
        guard state.withLock({ $0.session }) != announcement.session else { return }
        let session = announcement.session
        // Sent to one of this machine's addresses, it is received at any of them.
        var destination = in_addr()
        inet_pton(AF_INET, session.address, &destination)
        let address = UDPSocket.isMulticast(destination) ? session.address : nil
        let socket = try UDPSocket.listen(address: address, port: session.port, url: name)
        state.withLock {
            if $0.socket >= 0 { close($0.socket) }
            // The address the announcement came from, and the origin it gives when it gives one.
            let origins = [from.sin_addr.s_addr] + (announcement.origin == 0 ? [] : [announcement.origin])
            $0 = State(
                socket: socket, session: session, announced: announcement.name, generation: $0.generation + 1,
                origins: origins)
        }
    }

    public func rewind() throws {}

    public func cancel() { cancelled.store(true, ordering: .releasing) }
}
