import Atomics
import Glibc

/// How a ring's producer (a stream's decoder thread) sleeps until the ring has room, without timers: it publishes
/// the free frames it waits for and sleeps on a semaphore, and the consumer (the render world) posts once it has
/// read that much room free. The control world posts too, to wake the producer for a seek or a stop.
public struct RingRoomSignal: @unchecked Sendable {
    /// Free frames the sleeping producer waits for (0: it is not waiting).
    public let wanted: UnsafeAtomic<Int>
    public let semaphore: UnsafeMutablePointer<sem_t>

    public static func create() -> RingRoomSignal {
        let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
        return RingRoomSignal(wanted: .create(0), semaphore: semaphore)
    }

    public func destroy() {
        wanted.destroy()
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Consumer side, after reading: wakes the producer once the room it waits for is free (once per wait).
    @_noLocks
    public func consumed(_ index: SPSCIndex) {
        // Pairs with the fence in `wait`: either the producer sees the frames just read, or this sees its request.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        let want = wanted.load(ordering: .relaxed)
        guard want > 0, index.writable() >= want,
              wanted.compareExchange(expected: want, desired: 0, ordering: .relaxed).exchanged else { return }
        // sem_post never blocks or allocates: it increments the count and wakes the waiter through the kernel.
        _ = _unsafePerformance { sem_post(semaphore) }
    }

    /// Control side: wakes the producer whatever the room (a seek, a stop, a consumer outside the render world).
    public func post() { sem_post(semaphore) }

    /// Producer side: sleeps until `frames` of `index` are free, or until `post`. A post that came before the call
    /// is not lost (the semaphore counts), so a caller that checked its own stop condition first cannot miss one.
    public func wait(untilWritable frames: Int, in index: SPSCIndex) {
        wanted.store(frames, ordering: .relaxed)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if index.writable() < frames {
            while sem_wait(semaphore) != 0 && errno == EINTR {}
        }
        wanted.store(0, ordering: .relaxed)
    }
}
