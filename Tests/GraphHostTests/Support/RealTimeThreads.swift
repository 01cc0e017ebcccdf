import Foundation
import Glibc

/// Threads of a test's own apparatus that must not be the late ones, such as a relay standing for the network: a
/// thread started inside `inheriting` runs at SCHED_FIFO, as PipeWire clients' data threads do, since
/// pthread_create gives a new thread its creator's scheduling by default. Only root may do this, and the tests that
/// need it run as root already. `fifoThreads` counts this process's SCHED_FIFO threads, so a test can check that the
/// new thread really runs at SCHED_FIFO.
enum RealTimeThreads {
    /// Runs `body` with this thread at SCHED_FIFO `priority` (below PipeWire's data threads, 88), then puts the
    /// thread's own scheduling back.
    static func inheriting<T>(priority: Int32 = 40, _ body: () throws -> T) throws -> T {
        let thread = pthread_self()
        var policy: Int32 = 0
        var before = sched_param()
        pthread_getschedparam(thread, &policy, &before)
        var fifo = sched_param(sched_priority: priority)
        let failed = pthread_setschedparam(thread, SCHED_FIFO, &fifo)
        guard failed == 0 else {
            throw TestSupport.ToolFailure(description: "cannot run at SCHED_FIFO: \(String(cString: strerror(failed)))")
        }
        defer { pthread_setschedparam(thread, policy, &before) }
        return try body()
    }

    /// How many of this process's threads run at SCHED_FIFO.
    static var fifoThreads: Int { ProcessThreads.scheduling(getpid()).filter { $0.policy == Int(SCHED_FIFO) }.count }
}
