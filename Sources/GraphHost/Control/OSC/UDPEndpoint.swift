// SOCK_DGRAM (bits/socket_type.h) reaches Swift through liblo's headers, not Glibc: without this import a debug
// build finds it only when a file importing CLo is compiled in the same batch.
import CLo
import FoundationEssentials
import Glibc

/// An IPv4 or IPv6 socket address (host and port), comparable by value.
public struct UDPEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// The normalized `sockaddr_in` or `sockaddr_in6` bytes.
    let bytes: [UInt8]

    /// Copies the address `address` points to; nil for a family other than IPv4 and IPv6.
    init?(_ address: UnsafePointer<sockaddr>) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let given = UnsafeRawPointer(address).load(as: sockaddr_in.self)
            var copy = sockaddr_in()
            copy.sin_family = given.sin_family
            copy.sin_port = given.sin_port
            copy.sin_addr = given.sin_addr
            bytes = withUnsafeBytes(of: copy) { Array($0) }
        case AF_INET6:
            let given = UnsafeRawPointer(address).load(as: sockaddr_in6.self)
            var copy = sockaddr_in6()
            copy.sin6_family = given.sin6_family
            copy.sin6_port = given.sin6_port
            copy.sin6_addr = given.sin6_addr
            copy.sin6_scope_id = given.sin6_scope_id
            bytes = withUnsafeBytes(of: copy) { Array($0) }
        default:
            return nil
        }
    }

    /// Resolves `host` (a name or a numeric address) and `port` for a datagram socket; `family` restricts the family
    /// (AF_UNSPEC for any). Throws with the resolver's reason.
    static func resolve(host: String, port: Int, family: Int32 = AF_UNSPEC, passive: Bool = false) throws -> UDPEndpoint
    {
        var hints = addrinfo()
        hints.ai_family = family
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0) | (family == AF_INET6 ? AI_V4MAPPED : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            throw SocketError.other("cannot resolve '\(host)': \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            if let address = current.pointee.ai_addr, let endpoint = UDPEndpoint(address) { return endpoint }
            entry = current.pointee.ai_next
        }
        throw SocketError.other("'\(host)' has no IPv4 or IPv6 address")
    }

    public var family: Int32 { Int32(withSockaddr { $0.pointee.sa_family }) }

    public var port: Int {
        withSockaddr { address in
            family == AF_INET
                ? Int(UInt16(bigEndian: UnsafeRawPointer(address).load(as: sockaddr_in.self).sin_port))
                : Int(UInt16(bigEndian: UnsafeRawPointer(address).load(as: sockaddr_in6.self).sin6_port))
        }
    }

    /// The same host at another port.
    func with(port: Int) -> UDPEndpoint {
        var copy = bytes
        let offset =
            family == AF_INET
            ? MemoryLayout<sockaddr_in>.offset(of: \.sin_port)! : MemoryLayout<sockaddr_in6>.offset(of: \.sin6_port)!
        copy[offset] = UInt8(port >> 8)
        copy[offset + 1] = UInt8(port & 0xFF)
        return UDPEndpoint(bytes: copy)
    }

    /// Whether `other` is the same host (any port).
    func sameHost(_ other: UDPEndpoint) -> Bool { with(port: 0) == other.with(port: 0) }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    /// The numeric host, e.g. `127.0.0.1` or `::1`.
    public var host: String {
        var name = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        _ = withSockaddr {
            getnameinfo($0, socklen_t(bytes.count), &name, socklen_t(name.count), nil, 0, NI_NUMERICHOST)
        }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public var description: String { family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Runs `body` with the address as a `sockaddr` and its length.
    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>) throws -> T) rethrows -> T {
        try bytes.withUnsafeBytes { try body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self)) }
    }

    var length: socklen_t { socklen_t(bytes.count) }
}
