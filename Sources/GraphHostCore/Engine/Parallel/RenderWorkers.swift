import Atomics
import CThreadGlue

/// Renders the steps of a slice on the calling thread and on worker threads at once, when its plan has a
/// `StepSchedule` and the slice is worth sharing (its steps took `shareAboveNanos` or more in the previous slice).
///
/// Every slice has a generation. The rendering thread prepares the schedule, publishes the slice (`claims` holds the
/// generation and the next slot to take) and wakes sleeping workers; then it and the workers take slots in turn with a
/// compare-and-swap, each waits until its slot holds a ready step (spinning briefly, then sleeping on the slot's futex
/// word), runs the step and readies the steps that waited for it. The rendering thread returns when every step has
/// finished. A worker that wakes after its slice has ended finds another generation in `claims` and takes nothing.
/// No lock, no allocation: atomics, and futexes to sleep on. Shared by the rendering thread and the workers; all its
/// memory is allocated by the control world (`create`, `destroy`).
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

    let job: UnsafeMutablePointer<Job>
    let leader: UnsafeMutablePointer<Leader>
    /// The current generation, a futex word idle workers sleep on.
    let generationWord: UnsafeMutablePointer<UnsafeAtomic<UInt32>.Storage>
    /// The generation (high 32 bits) and the next slot to take.
    let claims: UnsafeAtomic<UInt64>
    /// Steps finished in the current slice, a futex word the rendering thread sleeps on.
    let finishedWord: UnsafeMutablePointer<UnsafeAtomic<UInt32>.Storage>
    /// Threads sleeping on a slot or on `finishedWord`, and workers sleeping on `generationWord`.
    let sleepers: UnsafeAtomic<Int>
    let idleWorkers: UnsafeAtomic<Int>
    let stopping: UnsafeAtomic<Bool>
    /// Steps the workers ran, in all.
    public let workerSteps: UnsafeAtomic<Int>
    /// The thread that renders (pthread id; 0 before its first shared slice): workers take its scheduling.
    public let renderThread: UnsafeAtomic<UInt>
    /// Worker threads serving this (besides the rendering thread).
    public let workers: Int
    /// A slice is shared when the previous slice's steps took at least this long.
    public let shareAboveNanos: Int

    /// How long a thread spins on a word before it sleeps on it.
    static let spinNanos = 20_000
    /// By default, slices whose steps take less are rendered on one thread: waking a worker costs more than it saves.
    public static let defaultShareAboveNanos = 30_000

    public static func create(workers: Int, shareAboveNanos: Int = defaultShareAboveNanos) -> RenderWorkers {
        let job = UnsafeMutablePointer<Job>.allocateRender(capacity: 1)
        let leader = UnsafeMutablePointer<Leader>.allocateRender(capacity: 1)
        leader.initialize(to: Leader())
        let generation = UnsafeMutablePointer<UnsafeAtomic<UInt32>.Storage>.allocateRender(capacity: 1)
        generation.initialize(to: .init(0))
        let finished = UnsafeMutablePointer<UnsafeAtomic<UInt32>.Storage>.allocateRender(capacity: 1)
        finished.initialize(to: .init(0))
        return RenderWorkers(
            job: job, leader: leader, generationWord: generation, claims: .create(0), finishedWord: finished,
            sleepers: .create(0), idleWorkers: .create(0), stopping: .create(false), workerSteps: .create(0),
            renderThread: .create(0), workers: workers, shareAboveNanos: shareAboveNanos)
    }

    /// Frees the memory; call after every worker has returned from `serve` and nothing renders.
    public func destroy() {
        job.deallocateRender()
        leader.deallocateRender()
        generationWord.deallocateRender()
        claims.destroy()
        finishedWord.deallocateRender()
        sleepers.destroy()
        idleWorkers.destroy()
        stopping.destroy()
        workerSteps.destroy()
        renderThread.destroy()
    }

    var generation: UnsafeAtomic<UInt32> { @_noLocks get { UnsafeAtomic(at: generationWord) } }
    var finished: UnsafeAtomic<UInt32> { @_noLocks get { UnsafeAtomic(at: finishedWord) } }

    /// Whether the next slice should be shared (rendering thread).
    @_noLocks
    func shares() -> Bool { workers > 0 && leader.pointee.lastStepNanos >= shareAboveNanos }

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
        schedule.begin(generation: g, sleepers: sleepers)
        finished.store(0, ordering: .relaxed)
        claims.store(UInt64(g) << 32, ordering: .sequentiallyConsistent)
        generation.store(g, ordering: .sequentiallyConsistent)
        if idleWorkers.load(ordering: .sequentiallyConsistent) > 0 {
            // FUTEX_WAKE never blocks: the kernel marks the sleepers runnable.
            _unsafePerformance {
                gh_futex_wake(UnsafeMutableRawPointer(generationWord).assumingMemoryBound(to: UInt32.self))
            }
        }
        work(generation: g, worker: false)
        let count = UInt32(truncatingIfNeeded: schedule.count)
        wait(on: finishedWord, until: { $0 == count })
    }

    /// A worker thread's life: renders its share of every slice until `stop`. Call on a thread of its own after
    /// `gh_enable_flush_to_zero`.
    @_noLocks
    public func serve() {
        var seen = generation.load(ordering: .acquiring)
        while !stopping.load(ordering: .acquiring) {
            let started = MonotonicClock.nanos()
            var current = generation.load(ordering: .acquiring)
            while current == seen && !stopping.load(ordering: .relaxed)
                && MonotonicClock.nanos() - started < Self.spinNanos
            {
                _unsafePerformance { gh_cpu_relax() }  // one `pause` instruction
                current = generation.load(ordering: .acquiring)
            }
            if current == seen && !stopping.load(ordering: .relaxed) {
                idleWorkers.wrappingIncrement(ordering: .sequentiallyConsistent)
                current = generation.load(ordering: .sequentiallyConsistent)
                if current == seen && !stopping.load(ordering: .sequentiallyConsistent) {
                    // FUTEX_WAIT sleeps in the kernel until the next slice is published; no lock is held.
                    _unsafePerformance {
                        gh_futex_wait(
                            UnsafeMutableRawPointer(generationWord).assumingMemoryBound(to: UInt32.self), seen)
                    }
                }
                idleWorkers.wrappingDecrement(ordering: .sequentiallyConsistent)
                continue
            }
            seen = current
            work(generation: current, worker: true)
        }
    }

    /// Ends `serve` on every worker (control world); join the threads before `destroy`.
    public func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        generation.wrappingIncrement(ordering: .sequentiallyConsistent)
        gh_futex_wake(UnsafeMutableRawPointer(generationWord).assumingMemoryBound(to: UInt32.self))
    }

    /// Takes slots of generation `g` and runs their steps until none is left to take.
    @_noLocks
    func work(generation g: UInt32, worker: Bool) {
        while true {
            var value = claims.load(ordering: .acquiring)
            var taken = false
            while !taken {
                guard UInt32(truncatingIfNeeded: value >> 32) == g else { return }
                let (exchanged, original) = claims.weakCompareExchange(
                    expected: value, desired: value &+ 1, ordering: .acquiringAndReleasing)
                taken = exchanged
                value = original
            }
            let slot = Int(truncatingIfNeeded: value & 0xFFFF_FFFF)
            let job = self.job.pointee
            guard slot < job.schedule.count else { return }
            wait(on: job.schedule.marks + slot, until: { $0 == g })
            let step = job.schedule.ready[slot]
            job.schedule.nanos[step] = job.steps[step].run(job.slice)
            _ = job.schedule.finish(step, generation: g, sleepers: sleepers)
            if worker { workerSteps.wrappingIncrement(ordering: .relaxed) }
            let done = finished.wrappingIncrementThenLoad(ordering: .sequentiallyConsistent)
            if done == UInt32(truncatingIfNeeded: job.schedule.count)
                && sleepers.load(ordering: .sequentiallyConsistent) > 0
            {
                // FUTEX_WAKE never blocks: the kernel marks the sleepers runnable.
                _unsafePerformance {
                    gh_futex_wake(UnsafeMutableRawPointer(finishedWord).assumingMemoryBound(to: UInt32.self))
                }
            }
        }
    }

    /// Waits until `word` satisfies `done`: spins for `spinNanos`, then sleeps on it (counted in `sleepers`, so
    /// whoever changes it wakes the sleepers).
    @_noLocks @inline(__always)
    func wait(on word: UnsafeMutablePointer<UnsafeAtomic<UInt32>.Storage>, until done: (UInt32) -> Bool) {
        let atomic = UnsafeAtomic<UInt32>(at: word)
        if done(atomic.load(ordering: .acquiring)) { return }
        let started = MonotonicClock.nanos()
        while MonotonicClock.nanos() - started < Self.spinNanos {
            _unsafePerformance { gh_cpu_relax() }  // one `pause` instruction
            if done(atomic.load(ordering: .acquiring)) { return }
        }
        sleepers.wrappingIncrement(ordering: .sequentiallyConsistent)
        while true {
            let value = atomic.load(ordering: .sequentiallyConsistent)
            if done(value) { break }
            // FUTEX_WAIT sleeps in the kernel until another thread changes the word; no lock is held.
            _unsafePerformance {
                gh_futex_wait(UnsafeMutableRawPointer(word).assumingMemoryBound(to: UInt32.self), value)
            }
        }
        sleepers.wrappingDecrement(ordering: .sequentiallyConsistent)
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
