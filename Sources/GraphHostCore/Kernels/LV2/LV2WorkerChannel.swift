import CLV2
import Glibc

/// One plugin instance's worker plumbing. Live, work scheduled in run() goes to the worker thread through
/// `requests`, work scheduled while the control world restores state goes through `restoreRequests` (its own
/// producer, so the render thread stays the only writer of `requests`), and the worker thread's answers come back
/// through `responses`, delivered before the next run(). Offline (`runsWorkInPlace`), schedule_work calls the
/// plugin's work() at once, as the worker specification allows when not real-time, so renders are deterministic.
public struct LV2WorkerChannel {
    public var requests: ByteRing
    public var restoreRequests: ByteRing
    public var responses: ByteRing
    /// Where a response is copied before it is handed to the plugin.
    public let scratch: UnsafeMutableRawPointer
    public static let scratchSize = 65536
    public var interface: UnsafePointer<LV2_Worker_Interface>?
    public var handle: LV2_Handle?
    /// Posted for every request; the worker thread sleeps on it (shared by a node's instances).
    public var wakeup: UnsafeMutablePointer<sem_t>?
    /// Offline: work runs inside schedule_work; set by the control world while nothing renders.
    public var runsWorkInPlace = true

    public static func allocate() -> LV2WorkerChannel {
        LV2WorkerChannel(
            requests: .allocate(capacity: 1 << 16), restoreRequests: .allocate(capacity: 1 << 16),
            responses: .allocate(capacity: 1 << 16),
            scratch: .allocateRender(byteCount: scratchSize, alignment: 16), interface: nil, handle: nil)
    }

    public func deallocate() {
        requests.deallocate()
        restoreRequests.deallocate()
        responses.deallocate()
        scratch.deallocateRender()
    }

    /// The plugin's schedule_work during run() (the render thread).
    @_noLocks
    public static func schedule(_ channel: UnsafeMutableRawPointer?, size: UInt32, data: UnsafeRawPointer?)
        -> LV2_Worker_Status
    {
        enqueue(channel, size: size, data: data, restoring: false)
    }

    /// The plugin's schedule_work while the control world restores its state.
    @_noLocks
    public static func scheduleForRestore(_ channel: UnsafeMutableRawPointer?, size: UInt32, data: UnsafeRawPointer?)
        -> LV2_Worker_Status
    {
        enqueue(channel, size: size, data: data, restoring: true)
    }

    @_noLocks
    static func enqueue(_ channel: UnsafeMutableRawPointer?, size: UInt32, data: UnsafeRawPointer?, restoring: Bool)
        -> LV2_Worker_Status
    {
        guard let channel, let data else { return LV2_WORKER_ERR_UNKNOWN }
        let c = channel.assumingMemoryBound(to: LV2WorkerChannel.self)
        if c.pointee.runsWorkInPlace { return work(c, size: size, data: data) }
        let ring = restoring ? c.pointee.restoreRequests : c.pointee.requests
        guard ring.write(data, size: Int(size)) else { return LV2_WORKER_ERR_NO_SPACE }
        c.pointee.wake()
        return LV2_WORKER_SUCCESS
    }

    /// Wakes the worker thread.
    @_noLocks
    func wake() {
        guard let wakeup else { return }
        // sem_post never blocks or allocates: it increments the count and wakes a waiter through the kernel.
        _ = _unsafePerformance { sem_post(wakeup) }
    }

    /// Runs the plugin's work() for one request of `channel`; its answers go into the channel's `responses`.
    @_noLocks
    public static func work(_ channel: UnsafeMutablePointer<LV2WorkerChannel>, size: UInt32, data: UnsafeRawPointer)
        -> LV2_Worker_Status
    {
        guard let interface = channel.pointee.interface, let work = interface.pointee.work else {
            return LV2_WORKER_ERR_UNKNOWN
        }
        let handle = channel.pointee.handle
        // work() is the plugin's non-real-time half: on the worker thread live, in place offline.
        return _unsafePerformance {
            work(
                handle,
                { respondHandle, size, data in
                    guard let respondHandle, let data else { return LV2_WORKER_ERR_UNKNOWN }
                    let c = respondHandle.assumingMemoryBound(to: LV2WorkerChannel.self)
                    return c.pointee.responses.write(data, size: Int(size))
                        ? LV2_WORKER_SUCCESS : LV2_WORKER_ERR_NO_SPACE
                }, UnsafeMutableRawPointer(channel), size, data)
        }
    }

    /// Hands waiting responses to the plugin (render thread, before run()).
    @_noLocks
    public mutating func deliverResponses() {
        guard let interface, let respond = interface.pointee.work_response else { return }
        while let size = responses.read(into: scratch, capacity: Self.scratchSize) {
            // work_response is the plugin's real-time half of the worker protocol.
            _ = _unsafePerformance { respond(handle, UInt32(size), scratch) }
        }
    }

    /// Tells the plugin the cycle is over (render thread, after run()).
    @_noLocks
    public mutating func endRun() {
        guard let interface, let end = interface.pointee.end_run else { return }
        // end_run is part of the worker's real-time protocol.
        _ = _unsafePerformance { end(handle) }
    }
}
