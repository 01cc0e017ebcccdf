import Atomics

/// A plan's steps as a dependency graph, for rendering them on several threads (`RenderWorkers`): which steps each
/// step must wait for, and the memory the threads share while they render one slice. A step becomes ready when its
/// last predecessor finishes; the thread that finished it runs one ready successor itself and publishes the others in
/// slots that threads take in turn. Every step reads only what its predecessors wrote, so a slice renders the same
/// samples on any number of threads. Built by the control world for plans that have steps able to run at once; owned by
/// the plan's memory (`CompiledPlan`).
public struct StepSchedule {
    public let count: Int
    /// How many steps each step waits for.
    let predecessorCounts: UnsafeMutablePointer<Int>
    /// The steps that wait for step i: `successors[successorStart[i] ..< successorStart[i + 1]]`.
    let successorStart: UnsafeMutablePointer<Int>
    let successors: UnsafeMutablePointer<Int>
    /// Per step in this slice: predecessors not yet finished, each counter on a cache line of its own (threads on
    /// different branches would otherwise contend for one line).
    let pending: UnsafeMutablePointer<UnsafeAtomic<Int>.Storage>
    static let pendingStride = 8
    /// The published steps in the order they were published, and the generation (`RenderWorkers`) each slot was
    /// filled in: a thread that took slot k waits until `marks[k]` holds the current generation.
    let ready: UnsafeMutablePointer<Int>
    let marks: UnsafeMutablePointer<UnsafeAtomic<UInt32>.Storage>
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
        pending = .allocateRender(capacity: max(1, count) * Self.pendingStride)
        pending.initialize(repeating: .init(0), count: max(1, count) * Self.pendingStride)
        ready = .allocateRender(capacity: max(1, count))
        ready.initialize(repeating: 0, count: max(1, count))
        marks = .allocateRender(capacity: max(1, count))
        marks.initialize(repeating: .init(0), count: max(1, count))
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
        nanos.deallocateRender()
    }

    @_noLocks @inline(__always)
    func pendingCount(_ step: Int) -> UnsafeAtomic<Int> { UnsafeAtomic(at: pending + step * Self.pendingStride) }

    @_noLocks @inline(__always)
    func mark(_ slot: Int) -> UnsafeAtomic<UInt32> { UnsafeAtomic(at: marks + slot) }

    /// Prepares a slice of generation `generation`: every step waits for all its predecessors, and the steps that
    /// wait for none are ready. Called before any other thread may see the generation.
    @_noLocks
    func begin(generation: UInt32, filled: UnsafeAtomic<Int>) {
        filled.store(0, ordering: .relaxed)
        for i in 0..<count where predecessorCounts[i] > 1 {
            pendingCount(i).store(predecessorCounts[i], ordering: .relaxed)
        }
        for i in 0..<count where predecessorCounts[i] == 0 { publish(i, generation: generation, filled: filled) }
    }

    /// Puts ready step `step` in the next slot (`filled` counts them), for any thread to take.
    @_noLocks
    func publish(_ step: Int, generation: UInt32, filled: UnsafeAtomic<Int>) {
        let slot = filled.loadThenWrappingIncrement(ordering: .sequentiallyConsistent)
        ready[slot] = step
        mark(slot).store(generation, ordering: .releasing)
    }

    /// After step `step` ran: its successors lose a predecessor. Of those left with none, the first is returned for
    /// the caller to run next (its input is in this core's cache) and the others are published; -1: none.
    @_noLocks
    func finish(_ step: Int, generation: UInt32, filled: UnsafeAtomic<Int>) -> (next: Int, published: Bool) {
        var next = -1
        var published = false
        for s in successorStart[step]..<successorStart[step + 1] {
            let successor = successors[s]
            // A step that waits for this one alone is ready now; others count down their predecessors.
            guard
                predecessorCounts[successor] == 1
                    || pendingCount(successor).loadThenWrappingDecrement(ordering: .acquiringAndReleasing) == 1
            else { continue }
            if next < 0 {
                next = successor
            } else {
                publish(successor, generation: generation, filled: filled)
                published = true
            }
        }
        return (next, published)
    }
}
