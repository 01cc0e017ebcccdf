import Atomics
import CThreadGlue

/// A plan's steps as a dependency graph, for rendering them on several threads (`RenderWorkers`): which steps each
/// step must wait for, and the memory the threads share while they render one slice. Steps become ready when their
/// last predecessor finishes and are taken in the order they became ready, so a slice renders the same samples on any
/// number of threads. Built by the control world for plans that have steps able to run at once; owned by the
/// plan's memory (`CompiledPlan`).
public struct StepSchedule {
    public let count: Int
    /// How many steps each step waits for.
    let predecessorCounts: UnsafeMutablePointer<Int>
    /// The steps that wait for step i: `successors[successorStart[i] ..< successorStart[i + 1]]`.
    let successorStart: UnsafeMutablePointer<Int>
    let successors: UnsafeMutablePointer<Int>
    /// Per step in this slice: predecessors not yet finished.
    let pending: UnsafeMutablePointer<UnsafeAtomic<Int>.Storage>
    /// The ready steps in the order they became ready, and the generation (`RenderWorkers`) each slot was filled in:
    /// a thread that took slot k sleeps on `marks[k]` until it holds the current generation.
    let ready: UnsafeMutablePointer<Int>
    let marks: UnsafeMutablePointer<UnsafeAtomic<UInt32>.Storage>
    /// Slots filled so far in this slice.
    let filled: UnsafeMutablePointer<UnsafeAtomic<Int>.Storage>
    /// Each step's time in this slice (ns), noted by the thread that ran it.
    public let nanos: UnsafeMutablePointer<Int>

    /// `predecessors[i]`: the steps (all before i) that step i waits for.
    public init(predecessors: [[Int]]) {
        count = predecessors.count
        predecessorCounts = .allocateRender(capacity: max(1, count))
        successorStart = .allocateRender(capacity: count + 1)
        var successorLists = [[Int]](repeating: [], count: count)
        for (i, before) in predecessors.enumerated() {
            precondition(before.allSatisfy { $0 < i }, "a step waits only for earlier steps")
            predecessorCounts[i] = Set(before).count
            for p in Set(before).sorted() { successorLists[p].append(i) }
        }
        let flat = successorLists.flatMap { $0 }
        successors = .allocateRender(capacity: max(1, flat.count))
        successors.initialize(from: flat, count: flat.count)
        var start = 0
        for i in 0..<count {
            successorStart[i] = start
            start += successorLists[i].count
        }
        successorStart[count] = start
        pending = .allocateRender(capacity: max(1, count))
        pending.initialize(repeating: .init(0), count: max(1, count))
        ready = .allocateRender(capacity: max(1, count))
        ready.initialize(repeating: 0, count: max(1, count))
        marks = .allocateRender(capacity: max(1, count))
        marks.initialize(repeating: .init(0), count: max(1, count))
        filled = .allocateRender(capacity: 1)
        filled.initialize(to: .init(0))
        nanos = .allocateRender(capacity: max(1, count))
        nanos.initialize(repeating: 0, count: max(1, count))
    }

    public func deallocate() {
        predecessorCounts.deallocateRender()
        successorStart.deallocateRender()
        successors.deallocateRender()
        pending.deallocateRender()
        ready.deallocateRender()
        marks.deallocateRender()
        filled.deallocateRender()
        nanos.deallocateRender()
    }

    @_noLocks @inline(__always)
    func pendingCount(_ step: Int) -> UnsafeAtomic<Int> { UnsafeAtomic(at: pending + step) }

    @_noLocks @inline(__always)
    func mark(_ slot: Int) -> UnsafeAtomic<UInt32> { UnsafeAtomic(at: marks + slot) }

    var filledSlots: UnsafeAtomic<Int> { @_noLocks get { UnsafeAtomic(at: filled) } }

    /// Prepares a slice of generation `generation`: every step waits for all its predecessors, and the steps that
    /// wait for none are ready. Called before any other thread may see the generation.
    @_noLocks
    func begin(generation: UInt32, sleepers: UnsafeAtomic<Int>) {
        filledSlots.store(0, ordering: .relaxed)
        for i in 0..<count {
            pendingCount(i).store(predecessorCounts[i], ordering: .relaxed)
        }
        for i in 0..<count where predecessorCounts[i] == 0 {
            makeReady(i, generation: generation, sleepers: sleepers)
        }
    }

    /// Step `step` can run: it takes the next slot, and threads sleeping on slots (`sleepers`) are woken.
    @_noLocks
    func makeReady(_ step: Int, generation: UInt32, sleepers: UnsafeAtomic<Int>) {
        let slot = filledSlots.loadThenWrappingIncrement(ordering: .relaxed)
        ready[slot] = step
        mark(slot).store(generation, ordering: .sequentiallyConsistent)
        if sleepers.load(ordering: .sequentiallyConsistent) > 0 {
            // FUTEX_WAKE never blocks: the kernel marks the sleepers runnable.
            _unsafePerformance {
                gh_futex_wake(UnsafeMutableRawPointer(marks + slot).assumingMemoryBound(to: UInt32.self))
            }
        }
    }

    /// After step `step` ran: its successors lose a predecessor; those left with none become ready. Returns whether a
    /// successor became ready.
    @_noLocks
    func finish(_ step: Int, generation: UInt32, sleepers: UnsafeAtomic<Int>) -> Bool {
        var any = false
        for s in successorStart[step]..<successorStart[step + 1] {
            let next = successors[s]
            if pendingCount(next).loadThenWrappingDecrement(ordering: .acquiringAndReleasing) == 1 {
                makeReady(next, generation: generation, sleepers: sleepers)
                any = true
            }
        }
        return any
    }
}
