import CSystemdGlue
import Glibc
import Synchronization

/// What wakes a thread that waits for events (a live run's loop, the MPRIS bus thread): `signal` from other threads,
/// and SIGINT or SIGTERM once `installStopHandlers` ran. An eventfd, waited on by `wait` together with the process's
/// signal eventfd, so a loop can wait without a timeout (nothing wakes an idle run) and a signal handler can still
/// wake it (writing to an eventfd is async-signal-safe); or polled by its owner beside other descriptors (`fd`).
public final class LoopWakeup: Sendable {
    private let descriptor: Int32

    public init() {
        descriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        precondition(descriptor >= 0, "cannot create an eventfd: \(String(cString: strerror(errno)))")
    }

    deinit { close(descriptor) }

    public func signal() { _ = eventfd_write(descriptor, 1) }

    /// The descriptor to poll beside others; `drain` after it was readable.
    var fd: Int32 { descriptor }

    /// Takes the pending signals, so the next poll waits again.
    func drain() {
        var value: eventfd_t = 0
        _ = eventfd_read(descriptor, &value)
    }

    /// Waits until signalled or a stop signal came (true), or `seconds` passed (false; nil waits without end).
    @discardableResult
    public func wait(seconds: Double?) -> Bool {
        var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        if stopDescriptor >= 0 { fds.append(pollfd(fd: stopDescriptor, events: Int16(POLLIN), revents: 0)) }
        let milliseconds = seconds.map { Int32(max(0, min($0 * 1000, Double(Int32.max)))) } ?? -1
        let ready = poll(&fds, nfds_t(fds.count), milliseconds)
        drain()
        return ready > 0
    }

    /// Makes SIGINT and SIGTERM set `stopRequested` and wake every waiting loop; SIGPIPE is ignored.
    public static func installStopHandlers() {
        if stopDescriptor < 0 { stopDescriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
        Glibc.signal(SIGPIPE, SIG_IGN)
        let handler: @convention(c) (Int32) -> Void = { _ in
            stopSignalled = 1
            _ = eventfd_write(stopDescriptor, 1)
        }
        Glibc.signal(SIGINT, handler)
        Glibc.signal(SIGTERM, handler)
    }

    /// Whether SIGINT or SIGTERM came since `installStopHandlers`.
    public static var stopRequested: Bool { stopSignalled != 0 }
}

/// Written by the stop handlers (async-signal-safe: plain stores and a write to an eventfd).
nonisolated(unsafe) private var stopSignalled: sig_atomic_t = 0
nonisolated(unsafe) private var stopDescriptor: Int32 = -1
