import CRenderWaitGlue
import CThreadGlue
import Dispatch
import Glibc
import GraphHostCore
import Logging
import Synchronization

/// The worker threads that share heavy slices with the rendering thread (`RenderWorkers`), owned by a session.
/// Live, each worker takes the scheduling of the thread that renders (PipeWire's data thread: SCHED_FIFO where the
/// system allows it) once that thread is known.
final class RenderWorkerPool {
    let workers: RenderWorkers
    private var running: [JoinableThread] = []
    private var pthreads: [UInt] = []
    private var followed: UInt = 0
    private static let logger = Logger(label: "graphhost")

    /// Threads for `--threads`: the cores, less one where there are more than two (the rest of the system keeps one).
    static var defaultThreads: Int {
        let cores = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        return cores > 2 ? cores - 1 : cores
    }

    /// `threads` renderers in all: the rendering thread and `threads - 1` workers; `setUp` runs first on each worker.
    init(threads: Int, shareAboveNanos: Int, setUp: (@Sendable () -> Void)? = nil) {
        workers = .create(workers: threads - 1, shareAboveNanos: shareAboveNanos)
        let started = Counter()
        for k in 1..<max(1, threads) {
            let workers = workers
            running.append(
                JoinableThread(name: "graphhost-dsp\(k)") {
                    gh_enable_flush_to_zero()
                    setUp?()
                    started.add(gh_thread_self())
                    workers.serve()
                })
        }
        pthreads = started.wait(for: threads - 1)
    }

    /// Gives every worker the rendering thread's scheduling, once that thread is known and whenever it changes. When
    /// a worker cannot take it (a real-time policy without the privilege), the graph renders on one thread: the
    /// real-time thread must not wait for one that is not.
    func followRenderThread() {
        let thread = workers.renderThread.load(ordering: .relaxed)
        guard thread != 0, thread != followed else { return }
        followed = thread
        for worker in pthreads {
            let result = gh_thread_copy_scheduling(worker, thread)
            if result != 0 {
                workers.suspended.store(true, ordering: .relaxed)
                let reason = String(cString: strerror(result))
                Self.logger.warning(
                    """
                    the render workers cannot take the scheduling of PipeWire's data thread (\(reason)); \
                    rendering on one thread (allow real-time scheduling, e.g. RLIMIT_RTPRIO, for --threads)
                    """)
                return
            }
        }
    }

    func stop() {
        workers.stop()
        running.forEach { $0.join() }
        running = []
        workers.destroy()
    }

    /// The workers' pthread ids as they start.
    private final class Counter: Sendable {
        private let ids = Mutex<[UInt]>([])
        private let arrived = DispatchSemaphore(value: 0)
        func add(_ id: UInt) {
            ids.withLock { $0.append(id) }
            arrived.signal()
        }
        func wait(for count: Int) -> [UInt] {
            for _ in 0..<count { arrived.wait() }
            return ids.withLock { $0 }
        }
    }
}
