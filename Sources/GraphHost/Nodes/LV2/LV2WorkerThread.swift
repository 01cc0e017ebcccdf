import Atomics
import CLV2
import CLilv
import Foundation

/// Runs the non-real-time half of LV2 workers: takes requests from each instance's channel, calls the
/// plugin's work(), and queues its responses for the render thread. Polls every millisecond.
final class LV2WorkerThread {
    private let channels: UnsafeMutablePointer<LV2WorkerChannel>
    private let count: Int
    private let stopping = ManagedAtomic(false)
    private var thread: JoinableThread?
    /// Full passes over the channels so far.
    private let passes = ManagedAtomic<Int>(0)

    init(channels: UnsafeMutablePointer<LV2WorkerChannel>, count: Int) {
        self.channels = channels
        self.count = count
    }

    func start() {
        // The channels are lock-free SPSC rings shared with the render world; this thread is the only one that
        // takes requests and queues responses while it runs.
        nonisolated(unsafe) let channels = channels
        let (count, stopping, passes) = (count, stopping, passes)
        thread = JoinableThread(name: "graphhost-lv2-worker") {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: LV2WorkerChannel.scratchSize, alignment: 16)
            defer { buffer.deallocate() }
            while !stopping.load(ordering: .acquiring) {
                var busy = false
                for i in 0..<count {
                    let channel = channels + i
                    guard let interface = channel.pointee.interface, let work = interface.pointee.work else { continue }
                    while let size = channel.pointee.requests.read(into: buffer, capacity: LV2WorkerChannel.scratchSize) {
                        busy = true
                        _ = work(channel.pointee.handle, { respondHandle, size, data in
                            guard let respondHandle, let data else { return LV2_WORKER_ERR_UNKNOWN }
                            let c = respondHandle.assumingMemoryBound(to: LV2WorkerChannel.self)
                            return c.pointee.responses.write(data, size: Int(size)) ? LV2_WORKER_SUCCESS : LV2_WORKER_ERR_NO_SPACE
                        }, UnsafeMutableRawPointer(channel), UInt32(size), buffer)
                    }
                }
                passes.wrappingIncrement(ordering: .releasing)
                if !busy { usleep(1000) }
            }
        }
    }

    /// Waits until every request scheduled before the call has been worked on and its response queued: two more
    /// full passes (the one under way may have looked at a channel before the request arrived). False after `timeout`.
    func waitUntilIdle(timeout: TimeInterval = 10) -> Bool {
        let target = passes.load(ordering: .acquiring) + 2
        let deadline = Date().addingTimeInterval(timeout)
        while passes.load(ordering: .acquiring) < target {
            if Date() >= deadline { return false }
            usleep(200)
        }
        return true
    }

    func stop() {
        guard thread != nil else { return }
        stopping.store(true, ordering: .releasing)
        thread?.join()
        thread = nil
    }
}
