import CLilv
import Foundation

/// Runs the non-real-time half of LV2 workers: takes requests from each instance's channel, calls the
/// plugin's work(), and queues its responses for the render thread. Polls every millisecond.
final class LV2WorkerThread {
    private let channels: UnsafeMutablePointer<LV2WorkerChannel>
    private let count: Int
    private let lock = NSLock()
    private var stopping = false
    private let done = DispatchSemaphore(value: 0)
    private var thread: Thread?

    init(channels: UnsafeMutablePointer<LV2WorkerChannel>, count: Int) {
        self.channels = channels
        self.count = count
    }

    func start() {
        let t = Thread { [self] in
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: LV2WorkerChannel.scratchSize, alignment: 16)
            defer { buffer.deallocate(); done.signal() }
            while !lock.withLock({ stopping }) {
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
                if !busy { usleep(1000) }
            }
        }
        t.name = "graphhost-lv2-worker"
        thread = t
        t.start()
    }

    func stop() {
        guard thread != nil else { return }
        lock.withLock { stopping = true }
        done.wait()
        thread = nil
    }
}
