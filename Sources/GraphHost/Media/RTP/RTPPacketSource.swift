import Glibc
import Synchronization

/// A UDP socket bound to an RTP session's address and port (joining it when it is a multicast group); `read` gives
/// one datagram a call. `cancel` wakes a waiting read, which then reports the end.
public final class RTPPacketSource: ByteSource, Sendable {
    public let session: RTPSession
    public let name: String
    public let counters: RTPReceiveCounters
    private let socket: Int32
    private let cancelled = Atomic<Bool>(false)

    public init(session: RTPSession, url: String, counters: RTPReceiveCounters = RTPReceiveCounters()) throws {
        self.session = session
        self.counters = counters
        name = url
        let fd = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw StreamError.network(url, "socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        // Room for a second of packets while the decoder thread waits for room in the ring.
        var bytes: Int32 = 1 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        var group = in_addr()
        inet_pton(AF_INET, session.address, &group)
        let multicast = (UInt32(bigEndian: group.s_addr) >> 28) == 0xE
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(session.port).bigEndian)
        address.sin_addr = multicast ? in_addr(s_addr: INADDR_ANY) : group
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw StreamError.network(url, "cannot listen on \(session.address):\(session.port): \(why)")
        }
        if multicast {
            var request = ip_mreq(imr_multiaddr: group, imr_interface: in_addr(s_addr: INADDR_ANY))
            guard
                setsockopt(fd, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &request, socklen_t(MemoryLayout<ip_mreq>.size))
                    == 0
            else {
                let why = String(cString: strerror(errno))
                close(fd)
                throw StreamError.network(url, "cannot join \(session.address): \(why)")
            }
        }
        socket = fd
    }

    deinit { close(socket) }

    /// The next datagram, waiting for it; 0 once cancelled.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while !cancelled.load(ordering: .acquiring) {
            var poll = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            // A bounded wait, so a cancel is seen even if no datagram comes.
            guard Glibc.poll(&poll, 1, 100) > 0 else { continue }
            let n = recv(socket, buffer.baseAddress, buffer.count, 0)
            if n > 0 { return n }
            if n < 0 && errno != EINTR && errno != EAGAIN {
                throw StreamError.network(name, "receive: \(String(cString: strerror(errno)))")
            }
        }
        return 0
    }

    public func rewind() throws {}

    public func cancel() { cancelled.store(true, ordering: .releasing) }
}
