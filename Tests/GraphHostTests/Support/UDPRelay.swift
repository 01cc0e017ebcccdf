import Foundation
import Glibc
import Synchronization

/// A UDP relay between a sender and a receiver: it takes datagrams on `address` at a port of its own and passes each
/// on to `address`:`port` `delay` seconds later, dropping every `dropEvery`th (a network's delay and loss, which this
/// kernel's missing netem cannot give). Made inside a network namespace (`NetworkNamespacePair.inside`), it relays
/// there.
final class UDPRelay: @unchecked Sendable {
    let port: Int
    private let socket: Int32
    private let destination: sockaddr_in
    private let delay: TimeInterval
    private let dropEvery: Int
    private let counts = Mutex((passed: 0, dropped: 0))
    private let stopping = Atomic<Bool>(false)
    private var thread: Thread?

    /// Datagrams passed on and dropped so far.
    var passed: Int { counts.withLock { $0.passed } }
    var dropped: Int { counts.withLock { $0.dropped } }

    init(address: String = "127.0.0.1", to port: Int, delay: TimeInterval, dropEvery: Int) throws {
        socket = try Self.boundSocket(address: address, port: 0)
        self.port = try Self.port(of: socket)
        destination = Self.socketAddress(address, port: port)
        self.delay = delay
        self.dropEvery = dropEvery
        let thread = Thread { [self] in run() }
        self.thread = thread
        thread.start()
    }

    func stop() { stopping.store(true, ordering: .releasing) }

    deinit { close(socket) }

    /// A free port on `address` (bound once, then released for the caller).
    static func freePort(address: String = "127.0.0.1") throws -> Int {
        let s = try boundSocket(address: address, port: 0)
        defer { close(s) }
        return try port(of: s)
    }

    private func run() {
        var pending: [(due: TimeInterval, bytes: [UInt8])] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var received = 0
        while !stopping.load(ordering: .acquiring) {
            let now = ProcessInfo.processInfo.systemUptime
            while let first = pending.first, first.due <= now {
                var to = destination
                _ = first.bytes.withUnsafeBytes { bytes in
                    withUnsafePointer(to: &to) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            sendto(
                                socket, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)
                            )
                        }
                    }
                }
                pending.removeFirst()
                counts.withLock { $0.passed += 1 }
            }
            let wait = pending.first.map { max(0, Int(($0.due - now) * 1000)) } ?? 50
            var poll = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard Glibc.poll(&poll, 1, Int32(min(wait, 50))) > 0 else { continue }
            let n = recv(socket, &buffer, buffer.count, 0)
            guard n > 0 else { continue }
            received += 1
            if received % dropEvery == 0 {
                counts.withLock { $0.dropped += 1 }
            } else {
                pending.append((ProcessInfo.processInfo.systemUptime + delay, Array(buffer[0..<n])))
            }
        }
    }

    private static func socketAddress(_ text: String, port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, text, &address.sin_addr)
        return address
    }

    private static func boundSocket(address text: String, port: Int) throws -> Int32 {
        let s = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var address = socketAddress(text, port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard s >= 0, bound == 0 else {
            throw TestSupport.ToolFailure(description: "cannot bind a UDP socket: \(String(cString: strerror(errno)))")
        }
        return s
    }

    private static func port(of socket: Int32) throws -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
