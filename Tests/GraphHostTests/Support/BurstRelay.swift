import Foundation
import Glibc
import Synchronization

/// A UDP relay on 127.0.0.1 between an RTP sender and its receiver that passes datagrams on as they come, or, when
/// asked, holds the next ones and passes them on all at once (a burst), or drops the next ones (a gap).
final class BurstRelay: @unchecked Sendable {
    let port: Int
    private let socket: Int32
    private var destination = sockaddr_in()
    private struct Plan {
        var hold = 0
        var drop = 0
        var held: [[UInt8]] = []
        var disturbances = 0
    }
    private let plan = Mutex(Plan())
    private let stopping = Atomic<Bool>(false)
    private var thread: Thread?

    /// Bursts passed on and gaps made so far (each counts once it is complete).
    var disturbances: Int { plan.withLock { $0.disturbances } }

    init(to port: Int) throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, "127.0.0.1", &local.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard fd >= 0, bound else { throw TestSupport.ToolFailure(description: "relay: errno \(errno)") }
        socket = fd
        self.port = Int(UInt16(bigEndian: local.sin_port))
        // A bounded wait, so a stop is seen even if no datagram comes.
        var wait = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        destination.sin_family = sa_family_t(AF_INET)
        destination.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &destination.sin_addr)
        let thread = Thread { [self] in run() }
        self.thread = thread
        thread.start()
    }

    deinit { close(socket) }

    func stop() { stopping.store(true, ordering: .releasing) }

    /// The next `count` datagrams are held, then passed on at once as the last of them comes.
    func hold(_ count: Int) { plan.withLock { $0.hold = count } }

    /// The next `count` datagrams are dropped.
    func drop(_ count: Int) { plan.withLock { $0.drop = count } }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !stopping.load(ordering: .acquiring) {
            let n = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { continue }
            let datagram = Array(buffer[..<n])
            let out: [[UInt8]] = plan.withLock { plan in
                if plan.drop > 0 {
                    plan.drop -= 1
                    if plan.drop == 0 { plan.disturbances += 1 }
                    return []
                }
                guard plan.hold > 0 else { return [datagram] }
                plan.held.append(datagram)
                plan.hold -= 1
                guard plan.hold == 0 else { return [] }
                defer { plan.held = [] }
                return plan.held
            }
            for bytes in out { send(bytes) }
            if out.count > 1 { plan.withLock { $0.disturbances += 1 } }
        }
    }

    private func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { b in
            withUnsafePointer(to: &destination) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(socket, b.baseAddress, b.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }
}
