import Glibc

/// Real-time scheduling for graphhost's own threads that must keep pace with PipeWire's data thread without being
/// it (a live plugin helper's render thread, an RTP session's receive thread): SCHED_FIFO at
/// `PluginIsolation.realTimePriority`, below PipeWire's data threads (88 by default), so the thread that renders is
/// never made to wait for them.
enum RealTimeScheduling {
    static let priority = PluginIsolation.realTimePriority

    /// Moves the calling thread to SCHED_FIFO at `priority` when `on`, else back to SCHED_OTHER; returns 0 or an errno
    /// (EPERM where real-time scheduling is not allowed, e.g. no RLIMIT_RTPRIO).
    static func setCurrentThread(realTime on: Bool) -> Int32 {
        var parameters = sched_param()
        parameters.sched_priority = on ? priority : 0
        return pthread_setschedparam(pthread_self(), on ? SCHED_FIFO : SCHED_OTHER, &parameters)
    }
}
