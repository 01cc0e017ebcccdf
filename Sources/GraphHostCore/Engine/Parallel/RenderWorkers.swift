import Atomics
import CRenderWaitGlue

/// Renders the steps of a slice on the calling thread and on worker threads at once, when its plan has a
/// `StepSchedule` and the slice is worth sharing (its steps took `shareAboveNanos` or more in the previous slice).
///
/// Every slice has a generation. The rendering thread prepares the schedule, publishes the slice (`claims` holds the
/// generation and the next slot to take) and wakes idle workers; then it and the workers take published slots in turn
/// with a compare-and-swap and run each slot's step and the chain of successors it readies, publishing the others;
/// a thread with no slot to take waits (spinning, then sleeping) for one, holding nothing. The rendering thread
/// returns when every step has finished and closes the generation; a worker that comes late finds it closed, or
/// another generation, and takes nothing. No lock, no allocation: atomics, and futexes to sleep on (`FutexEvent`).
/// Shared by the rendering thread and the workers; all its memory is allocated by the control world (`create`,
/// `destroy`).
public struct RenderWorkers: @unchecked Sendable {
    /// What the threads render in the current slice; written by the rendering thread before it publishes `claims`,
    /// read by a thread only after it took a slot.
    struct Job {
        var steps: UnsafeMutablePointer<RenderStep>
        var schedule: StepSchedule
        var slice: RenderSlice
    }

    /// The rendering thread's own state.
    struct Leader {
        var generation: UInt32 = 0
        var lastStepNanos = 0
    }

    /// Live, slices come once a quantum: an idle worker sleeps until `leadNanos` before the next is due (the last
    /// two came `period` apart) and spins from there, so it is running when the slice comes instead of waking then
    /// (tens of µs on a virtual machine, and a cold core). Slices less than `minimumPeriod` apart (offline, or a
    /// quantum split into slices) are met by the short spin alone.
    static let leadNanos = 100_000
    static let minimumPeriod = 400_000

    let job: UnsafeMutablePointer<Job>
    let leader: UnsafeMutablePointer<Leader>
    /// The current generation (high 32 bits) and the next slot to take.
    let claims: UnsafeAtomic<UInt64>
    /// Slots published and steps finished in the current slice.
    let filled: UnsafeAtomic<Int>
    let finished: UnsafeAtomic<Int>
    /// Signalled when a slice is published (idle workers wait on it) and when a step is published or the slice has
    /// finished (threads waiting for a slot, the rendering thread waiting for the end).
    let published: FutexEvent
    let progress: FutexEvent
    /// Workers between trying to take a slot and having run what they took: the rendering thread closes `claims` at
    /// the end of a slice and waits for none to be left before it changes `job` (they hold no slot for long).
    let inside: UnsafeAtomic<Int>
    let stopping: UnsafeAtomic<Bool>
    /// Set by the control world when the workers cannot run at the rendering thread's scheduling: slices are then
    /// rendered on the rendering thread alone (a real-time thread must not wait for a thread that is not one).
    public let suspended: UnsafeAtomic<Bool>
    /// When the rendering thread published the current slice (monotonic ns).
    let publishedAt: UnsafeAtomic<Int>
    /// Steps the workers ran, in all.
    public let workerSteps: UnsafeAtomic<Int>
    /// The thread that renders (pthread id; 0 before its first shared slice): workers take its scheduling.
    public let renderThread: UnsafeAtomic<UInt>
    /// Worker threads serving this (besides the rendering thread).
    public let workers: Int
    /// A slice is shared when the previous slice's steps took at least this long.
    public let shareAboveNanos: Int

    /// By default, slices whose steps take less are rendered on one thread: waking a worker costs more than it saves.
    public static let defaultShareAboveNanos = 30_000

    public static func create(workers: Int, shareAboveNanos: Int = defaultShareAboveNanos) -> RenderWorkers {
        let job = UnsafeMutablePointer<Job>.allocateRender(capacity: 1)
        let leader = UnsafeMutablePointer<Leader>.allocateRender(capacity: 1)
        leader.initialize(to: Leader())
        return RenderWorkers(
            job: job, leader: leader, claims: .create(0), filled: .create(0), finished: .create(0),
            published: .create(),
            progress: .create(), inside: .create(0), stopping: .create(false), suspended: .create(false),
            publishedAt: .create(0),
            workerSteps: .create(0), renderThread: .create(0),
            workers: workers, shareAboveNanos: shareAboveNanos)
    }

    /// Frees the memory; call after every worker has returned from `serve` and nothing renders.
    public func destroy() {
        job.deallocateRender()
        leader.deallocateRender()
        claims.destroy()
        filled.destroy()
        finished.destroy()
        published.destroy()
        progress.destroy()
        inside.destroy()
        stopping.destroy()
        suspended.destroy()
        publishedAt.destroy()
        workerSteps.destroy()
        renderThread.destroy()
    }

    /// `claims` once the slice of generation `g` has finished: no slot can be taken.
    @_noLocks @inline(__always)
    static func closed(_ g: UInt32) -> UInt64 { UInt64(g) << 32 | UInt64(UInt32.max) }

    /// Whether the next slice should be shared (rendering thread).
    @_noLocks
    func shares() -> Bool {
        workers > 0 && leader.pointee.lastStepNanos >= shareAboveNanos && !suspended.load(ordering: .relaxed)
    }

    /// Notes how long the slice's steps took in all (rendering thread).
    @_noLocks
    func noteSlice(stepNanos: Int) { leader.pointee.lastStepNanos = stepNanos }

    /// Renders every step of `steps` over `slice` on this thread and the workers; returns when all have finished,
    /// each step's time in `schedule.nanos`.
    @_noLocks
    func render(_ steps: UnsafeMutablePointer<RenderStep>, _ schedule: StepSchedule, _ slice: RenderSlice) {
        let me = _unsafePerformance { gh_thread_self() }  // reads the thread pointer; no system call
        if renderThread.load(ordering: .relaxed) != me { renderThread.store(me, ordering: .relaxed) }
        var g = leader.pointee.generation &+ 1
        if g == 0 { g = 1 }
        leader.pointee.generation = g
        job.pointee = Job(steps: steps, schedule: schedule, slice: slice)
        schedule.begin(generation: g, filled: filled)
        finished.store(0, ordering: .relaxed)
        publishedAt.store(MonotonicClock.nanos(), ordering: .relaxed)
        claims.store(UInt64(g) << 32, ordering: .sequentiallyConsistent)
        published.signal()
        let count = schedule.count
        while finished.load(ordering: .acquiring) < count {
            if !takeSlot(generation: g, worker: false) {
                progress.wait { canTake(generation: g) || finished.load(ordering: .acquiring) == count }
            }
        }
        claims.store(Self.closed(g), ordering: .sequentiallyConsistent)
        progress.signal()
        progress.wait { inside.load(ordering: .sequentiallyConsistent) == 0 }
    }

    /// A worker thread's life: renders its share of every slice until `stop`. Call on a thread of its own after
    /// `gh_enable_flush_to_zero`.
    @_noLocks
    public func serve() {
        var seen = UInt32(truncatingIfNeeded: claims.load(ordering: .acquiring) >> 32)
        var last = 0
        var period = 0
        while true {
            if period >= Self.minimumPeriod && period < 100 * Self.minimumPeriod {
                let due = last + period
                if !begun(after: seen) { published.sleep(until: due - Self.leadNanos) }
                _ = published.spin(until: due + Self.leadNanos) { begun(after: seen) }
            }
            published.wait { begun(after: seen) }
            let current = UInt32(truncatingIfNeeded: claims.load(ordering: .acquiring) >> 32)
            if stopping.load(ordering: .acquiring) { return }
            seen = current
            let at = publishedAt.load(ordering: .relaxed)
            period = last > 0 ? at - last : 0
            last = at
            work(generation: current)
        }
    }

    /// Whether a slice after generation `seen` was published, or the workers are stopping.
    @_noLocks
    func begun(after seen: UInt32) -> Bool {
        UInt32(truncatingIfNeeded: claims.load(ordering: .acquiring) >> 32) != seen || stopping.load(ordering: .relaxed)
    }

    /// Ends `serve` on every worker (control world); join the threads before `destroy`.
    public func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        published.signal()
    }

    /// Takes slots of generation `g` and runs their steps until the generation is closed (worker threads).
    @_noLocks
    func work(generation g: UInt32) {
        while true {
            inside.wrappingIncrement(ordering: .sequentiallyConsistent)
            let ran = takeSlot(generation: g, worker: true)
            inside.wrappingDecrement(ordering: .sequentiallyConsistent)
            // The rendering thread may be waiting for the last worker to leave the slice it closed.
            let value = claims.load(ordering: .sequentiallyConsistent)
            if value == Self.closed(g) { progress.signal() }
            if UInt32(truncatingIfNeeded: value >> 32) != g || value == Self.closed(g) { return }
            if !ran { progress.wait { canTake(generation: g) } }
        }
    }

    /// Whether a published slot of generation `g` waits to be taken, or `g` is over (closed, or another one began).
    @_noLocks
    func canTake(generation g: UInt32) -> Bool {
        let value = claims.load(ordering: .sequentiallyConsistent)
        return UInt32(truncatingIfNeeded: value >> 32) != g || value == Self.closed(g)
            || Int(truncatingIfNeeded: value & 0xFFFF_FFFF) < filled.load(ordering: .sequentiallyConsistent)
    }

    /// Takes the next published slot of generation `g` and runs its step and the chain of successors it readies;
    /// false when no slot was published to take.
    @_noLocks
    func takeSlot(generation g: UInt32, worker: Bool) -> Bool {
        var value = claims.load(ordering: .sequentiallyConsistent)
        while true {
            guard UInt32(truncatingIfNeeded: value >> 32) == g, value != Self.closed(g) else { return false }
            // `filled` is this generation's while `claims` is: the compare-and-swap fails once the slice is closed.
            guard Int(truncatingIfNeeded: value & 0xFFFF_FFFF) < filled.load(ordering: .sequentiallyConsistent) else {
                return false
            }
            let (exchanged, original) = claims.weakCompareExchange(
                expected: value, desired: value &+ 1, ordering: .sequentiallyConsistent)
            if exchanged { break }
            value = original
        }
        // The slot is held and `g` open: the rendering thread keeps `job` until this thread has left.
        let slot = Int(truncatingIfNeeded: value & 0xFFFF_FFFF)
        let job = self.job.pointee
        let schedule = job.schedule
        // The publisher counted the slot before it wrote it: at most a few instructions behind.
        progress.wait { schedule.mark(slot).load(ordering: .acquiring) == g }
        var step = schedule.ready[slot]
        var ran = 0
        while step >= 0 {
            schedule.nanos[step] = job.steps[step].run(job.slice)
            ran += 1
            let (next, publishedAny) = schedule.finish(step, generation: g, filled: filled)
            if publishedAny { progress.signal() }
            step = next
        }
        // Counted once a chain: the counters are shared by every thread.
        if worker { workerSteps.wrappingIncrement(by: ran, ordering: .relaxed) }
        if finished.wrappingIncrementThenLoad(by: ran, ordering: .acquiringAndReleasing) == schedule.count {
            progress.signal()
        }
        return true
    }
}

extension RenderStep {
    /// Renders this step over `slice`, then measures and taps its output; returns how long that took (ns).
    @_noLocks @inline(__always)
    func run(_ slice: RenderSlice) -> Int {
        let started = MonotonicClock.nanos()
        kernel.render(self, slice)
        if let output {
            meter?.pointee.measure(output, channelStride: slice.channelStride, frames: slice.frames)
            tap?.pointee.capture(output, channelStride: slice.channelStride, frames: slice.frames)
        }
        return MonotonicClock.nanos() - started
    }
}
