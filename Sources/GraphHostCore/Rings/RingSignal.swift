import Atomics
import Glibc

/// How a control-world thread sleeps until the render world has done its part to a ring, without timers: the
/// sleeper publishes how much room (a stream's decoder) or data (the recording writer, the MIDI control surface) it
/// waits for and sleeps on a semaphore; the render world, after reading or writing, posts once that much is there.
/// The control world posts too, to wake the sleeper for anything else (a seek, a stop).
public struct RingSignal: @unchecked Sendable {
    /// Items the sleeper waits for (0: it is not waiting).
    public let wanted: UnsafeAtomic<Int>
    public let semaphore: UnsafeMutablePointer<sem_t>

    public static func create() -> RingSignal {
        let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
        return RingSignal(wanted: .create(0), semaphore: semaphore)
    }

    public func destroy() {
        wanted.destroy()
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Render side, after reading from `index`: wakes a sleeper waiting for that much room.
    @_noLocks
    public func roomFreed(in index: SPSCIndex) { notify(index, data: false) }

    /// Render side, after writing to `index`: wakes a sleeper waiting for that much data.
    @_noLocks
    public func dataWritten(in index: SPSCIndex) { notify(index, data: true) }

    @_noLocks
    func notify(_ index: SPSCIndex, data: Bool) {
        // Pairs with the fence in `wait`: either the sleeper sees what was just done, or this sees its request.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        let want = wanted.load(ordering: .relaxed)
        guard want > 0, (data ? index.readable() : index.writable()) >= want,
            wanted.compareExchange(expected: want, desired: 0, ordering: .relaxed).exchanged
        else { return }
        // sem_post never blocks or allocates: it increments the count and wakes the sleeper through the kernel.
        _ = _unsafePerformance { sem_post(semaphore) }
    }

    /// Control side: wakes the sleeper whatever the ring holds.
    public func post() { sem_post(semaphore) }

    /// Sleeps until `count` items of `index` are free, or until `post`. A post that came before the call is not lost
    /// (the semaphore counts), so a caller that checked its own stop condition first cannot miss one.
    public func wait(untilWritable count: Int, in index: SPSCIndex) { wait(for: count, in: index, data: false) }

    /// Sleeps until `count` items of `index` can be read, or until `post`.
    public func wait(untilReadable count: Int, in index: SPSCIndex) { wait(for: count, in: index, data: true) }

    /// Sleeps until `count` items of `index` are free, until `post`, or for at most `seconds`.
    public func wait(untilWritable count: Int, in index: SPSCIndex, seconds: Double) {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanos = Int(deadline.tv_nsec) + Int(max(0, seconds) * 1e9)
        deadline.tv_sec += nanos / 1_000_000_000
        deadline.tv_nsec = nanos % 1_000_000_000
        wait(for: count, in: index, data: false, deadline: deadline)
    }

    private func wait(for count: Int, in index: SPSCIndex, data: Bool, deadline: timespec? = nil) {
        wanted.store(count, ordering: .relaxed)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if (data ? index.readable() : index.writable()) < count {
            if var deadline {
                while sem_timedwait(semaphore, &deadline) != 0 && errno == EINTR {}
            } else {
                while sem_wait(semaphore) != 0 && errno == EINTR {}
            }
        }
        wanted.store(0, ordering: .relaxed)
    }
}
