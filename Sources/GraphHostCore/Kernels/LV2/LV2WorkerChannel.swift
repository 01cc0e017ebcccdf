import CLV2

/// One plugin instance's worker plumbing: requests scheduled in run() go to the worker thread through
/// `requests`; the worker's responses come back through `responses` and are delivered before the next run().
public struct LV2WorkerChannel {
    public var requests: ByteRing
    public var responses: ByteRing
    /// Where a response is copied before it is handed to the plugin.
    public let scratch: UnsafeMutableRawPointer
    public static let scratchSize = 65536
    public var interface: UnsafePointer<LV2_Worker_Interface>?
    public var handle: LV2_Handle?

    public static func allocate() -> LV2WorkerChannel {
        LV2WorkerChannel(requests: .allocate(capacity: 1 << 16), responses: .allocate(capacity: 1 << 16),
                         scratch: .allocateRender(byteCount: scratchSize, alignment: 16), interface: nil, handle: nil)
    }

    public func deallocate() {
        requests.deallocate()
        responses.deallocate()
        scratch.deallocateRender()
    }

    /// The plugin's schedule_work (called from its run() on the render thread).
    @_noLocks
    public static func schedule(_ channel: UnsafeMutableRawPointer?, size: UInt32, data: UnsafeRawPointer?) -> LV2_Worker_Status {
        guard let channel, let data else { return LV2_WORKER_ERR_UNKNOWN }
        let c = channel.assumingMemoryBound(to: LV2WorkerChannel.self)
        return c.pointee.requests.write(data, size: Int(size)) ? LV2_WORKER_SUCCESS : LV2_WORKER_ERR_NO_SPACE
    }

    /// Hands waiting responses to the plugin (render thread, before run()).
    @_noLocks
    public func deliverResponses() {
        guard let interface, let respond = interface.pointee.work_response else { return }
        while let size = responses.read(into: scratch, capacity: Self.scratchSize) {
            // work_response is the plugin's real-time half of the worker protocol.
            _ = _unsafePerformance { respond(handle, UInt32(size), scratch) }
        }
    }

    /// Tells the plugin the cycle is over (render thread, after run()).
    @_noLocks
    public func endRun() {
        guard let interface, let end = interface.pointee.end_run else { return }
        // end_run is part of the worker's real-time protocol.
        _ = _unsafePerformance { end(handle) }
    }
}
