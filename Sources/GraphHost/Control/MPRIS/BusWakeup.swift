import CSystemdGlue
import Glibc
import Synchronization

/// An eventfd that other threads signal to wake the bus thread out of its poll. Closing it under the same lock as
/// signalling keeps a late signal from writing to a reused descriptor.
final class BusWakeup: Sendable {
    private let descriptor: Mutex<Int32>

    init() throws {
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else { throw SocketError.system("cannot create an eventfd", errno: errno) }
        descriptor = Mutex(fd)
    }

    /// The descriptor to poll (-1 once closed).
    var fd: Int32 { descriptor.withLock { $0 } }

    func signal() {
        descriptor.withLock { fd in
            if fd >= 0 { _ = eventfd_write(fd, 1) }
        }
    }

    /// Takes the pending signals, so the next poll waits again.
    func drain() {
        descriptor.withLock { fd in
            var value: eventfd_t = 0
            if fd >= 0 { _ = eventfd_read(fd, &value) }
        }
    }

    func close() {
        descriptor.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }
}
