import Glibc

/// A UDP socket bound to a port at an IPv4 address, joining the address when it is a multicast group. A unicast socket
/// has its port to itself (no other socket can bind it while it listens); one that joins a group shares the port
/// (`SO_REUSEADDR`), as every receiver of a multicast group must.
enum UDPSocket {
    /// Binds `port` at `address` (nil: every local address, joining `groups` where the network allows); the error
    /// names `url`. A multicast `address` that cannot be joined is an error.
    static func listen(address: String?, port: Int, groups: [String] = [], url: String) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw StreamError.network(url, "socket: \(String(cString: strerror(errno)))") }
        // Room for a second of packets while the decoder thread waits for room in the ring.
        var bytes: Int32 = 1 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        var group = in_addr(s_addr: INADDR_ANY)
        if let address { inet_pton(AF_INET, address, &group) }
        let multicast = isMulticast(group)
        if multicast || (address == nil && !groups.isEmpty) {
            var yes: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_port = in_port_t(UInt16(port).bigEndian)
        local.sin_addr = multicast ? in_addr(s_addr: INADDR_ANY) : group
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw StreamError.network(url, "cannot listen on \(address ?? "0.0.0.0"):\(port): \(why)")
        }
        if multicast, !join(fd, group) {
            let why = String(cString: strerror(errno))
            close(fd)
            throw StreamError.network(url, "cannot join \(address!): \(why)")
        }
        if address == nil {
            for text in groups {
                var extra = in_addr()
                inet_pton(AF_INET, text, &extra)
                _ = join(fd, extra)
            }
        }
        return fd
    }

    static func isMulticast(_ address: in_addr) -> Bool { (UInt32(bigEndian: address.s_addr) >> 28) == 0xE }

    private static func join(_ fd: Int32, _ group: in_addr) -> Bool {
        var request = ip_mreq(imr_multiaddr: group, imr_interface: in_addr(s_addr: INADDR_ANY))
        return setsockopt(fd, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &request, socklen_t(MemoryLayout<ip_mreq>.size))
            == 0
    }
}
