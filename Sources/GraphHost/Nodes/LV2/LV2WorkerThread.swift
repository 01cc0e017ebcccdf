import Atomics
import CLV2
import FoundationEssentials
import Glibc

/// Runs the non-real-time half of an LV2 node's workers live: sleeps on a semaphore that every request posts, then
/// takes the requests of each instance's channel (run-time ones, then those of state restores), calls the plugin's
/// work(), and queues its responses for the render thread. Offline the channels run work in place and this thread
/// only sleeps.
final class LV2WorkerThread {
    private let channels: UnsafeMutablePointer<LV2WorkerChannel>
    private let count: Int
    /// The semaphore the channels post; owned here, freed after the thread stopped.
    let wakeup: UnsafeMutablePointer<sem_t>
    private let stopping = ManagedAtomic(false)
    private var thread: JoinableThread?
    /// Wake-ups so far (each a full pass over the channels), and passes asked for by `waitUntilIdle`.
    let passes = ManagedAtomic<Int>(0)

    init(channels: UnsafeMutablePointer<LV2WorkerChannel>, count: Int) {
        self.channels = channels
        self.count = count
        wakeup = .allocate(capacity: 1)
        sem_init(wakeup, 0, 0)
        for i in 0..<count { channels[i].wakeup = wakeup }
    }

    deinit {
        stop()
        for i in 0..<count { channels[i].wakeup = nil }
        sem_destroy(wakeup)
        wakeup.deallocate()
    }

    func start() {
        guard thread == nil else { return }
        // The channels are lock-free SPSC rings shared with the render world (requests, responses) and with the
        // control thread that restores state (restore requests); this thread is the only consumer of both request
        // rings and the only producer of responses while it runs.
        nonisolated(unsafe) let channels = channels
        nonisolated(unsafe) let wakeup = wakeup
        let (count, stopping, passes) = (count, stopping, passes)
        thread = JoinableThread(name: "graphhost-lv2-worker") {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: LV2WorkerChannel.scratchSize, alignment: 16)
            defer { buffer.deallocate() }
            while true {
                while sem_wait(wakeup) != 0 && errno == EINTR {}
                if stopping.load(ordering: .acquiring) { return }
                for i in 0..<count {
                    let channel = channels + i
                    for ring in [channel.pointee.requests, channel.pointee.restoreRequests] {
                        while let size = ring.read(into: buffer, capacity: LV2WorkerChannel.scratchSize) {
                            _ = LV2WorkerChannel.work(channel, size: UInt32(size), data: buffer)
                        }
                    }
                }
                passes.wrappingIncrement(ordering: .releasing)
            }
        }
    }

    /// Wake-ups posted and not yet taken by the thread.
    var pendingWakeups: Int32 {
        var value: Int32 = 0
        sem_getvalue(wakeup, &value)
        return value
    }

    /// Waits until every request scheduled before the call has been worked on and its response queued: one pass
    /// that starts after the call (false after `timeout`).
    func waitUntilIdle(timeout: TimeInterval = 10) -> Bool {
        guard thread != nil else { return true }
        let target = passes.load(ordering: .acquiring) + 2
        sem_post(wakeup)
        sem_post(wakeup)
        let deadline = Date().addingTimeInterval(timeout)
        while passes.load(ordering: .acquiring) < target {
            if Date() >= deadline { return false }
            usleep(200)
        }
        return true
    }

    func stop() {
        guard let thread else { return }
        stopping.store(true, ordering: .releasing)
        sem_post(wakeup)
        thread.join()
        self.thread = nil
    }
}
