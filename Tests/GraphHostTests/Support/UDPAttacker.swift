import Foundation
import Glibc
import XCTest

/// A UDP socket of the test's on 127.0.0.1 (or `from`) sending datagrams to `port` there; and what the kernel's table
/// (/proc/net/udp) says of the socket bound to a port.
final class UDPAttacker {
    private let fd: Int32
    private var destination = sockaddr_in()

    init(port: Int, from: String = "127.0.0.1") throws {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, from, &local.sin_addr)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard fd >= 0, bound == 0 else {
            throw TestSupport.ToolFailure(description: "cannot bind a socket at \(from): \(errno)")
        }
        var size: Int32 = 1 << 20
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        destination.sin_family = sa_family_t(AF_INET)
        destination.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &destination.sin_addr)
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8]) {
        let sent = bytes.withUnsafeBytes { b in
            withUnsafePointer(to: &destination) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, b.baseAddress, b.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        XCTAssertEqual(sent, bytes.count, "sendto: errno \(errno)")
    }

    /// The errno of binding a UDP socket at `address`:`port` (0: it bound).
    static func bindError(address: String, port: Int, reuseAddress: Bool) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var yes: Int32 = 1
        if reuseAddress { setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size)) }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, address, &local.sin_addr)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return bound == 0 ? 0 : errno
    }

    /// The lines of /proc/net/udp of sockets bound to `port`: their fields.
    private static func table(port: Int) -> [[Substring]] {
        let text = (try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8)) ?? ""
        let suffix = ":" + String(format: "%04X", port)
        return text.split(separator: "\n").dropFirst().map { $0.split(separator: " ") }
            .filter { $0.count > 12 && $0[1].hasSuffix(suffix) }
    }

    static func isBound(port: Int) -> Bool { !table(port: port).isEmpty }

    /// Bytes waiting in the receive queues of the sockets bound to `port`.
    static func queuedBytes(port: Int) -> Int {
        table(port: port).reduce(0) { $0 + (Int($1[4].split(separator: ":").last ?? "", radix: 16) ?? 0) }
    }

    /// Datagrams the kernel dropped for want of room in the receive queues of the sockets bound to `port`.
    static func kernelDrops(port: Int) -> Int { table(port: port).reduce(0) { $0 + (Int($1.last ?? "") ?? 0) } }
}
