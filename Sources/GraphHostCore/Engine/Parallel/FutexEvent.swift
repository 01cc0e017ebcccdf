import Atomics
import CRenderWaitGlue

/// A 32-bit word that counts events, for threads that wait for a condition the events make true: a waiter spins
/// for `spinNanos`, then sleeps on the word (a private futex) until an event changes it. Whoever makes the condition
/// true calls `signal` after; it enters the kernel only when someone sleeps. Memory from `create`, freed by `destroy`.
public struct FutexEvent: @unchecked Sendable {
    let word: UnsafeMutablePointer<UnsafeAtomic<UInt32>.Storage>
    let sleepers: UnsafeAtomic<Int>

    /// How long a waiter spins before it sleeps.
    static let spinNanos = 20_000

    public static func create() -> FutexEvent {
        let word = UnsafeMutablePointer<UnsafeAtomic<UInt32>.Storage>.allocateRender(capacity: 1)
        word.initialize(to: .init(0))
        return FutexEvent(word: word, sleepers: .create(0))
    }

    public func destroy() {
        word.deallocateRender()
        sleepers.destroy()
    }

    var counter: UnsafeAtomic<UInt32> { @_noLocks get { UnsafeAtomic(at: word) } }
    var address: UnsafeMutablePointer<UInt32> {
        @_noLocks get { UnsafeMutableRawPointer(word).assumingMemoryBound(to: UInt32.self) }
    }

    /// Wakes the waiters after the caller made their condition true.
    @_noLocks
    public func signal() {
        counter.wrappingIncrement(ordering: .sequentiallyConsistent)
        if sleepers.load(ordering: .sequentiallyConsistent) > 0 {
            // FUTEX_WAKE never blocks: the kernel marks the sleepers runnable.
            _unsafePerformance { gh_futex_wake(address) }
        }
    }

    /// Sleeps until monotonic time `deadline` (ns), or until a signal, whichever comes first.
    @_noLocks
    public func sleep(until deadline: Int) {
        sleepers.wrappingIncrement(ordering: .sequentiallyConsistent)
        let seen = counter.load(ordering: .sequentiallyConsistent)
        let left = deadline - MonotonicClock.nanos()
        // FUTEX_WAIT with a timeout sleeps in the kernel; no lock is held.
        if left > 0 { _unsafePerformance { gh_futex_wait_for(address, seen, left) } }
        sleepers.wrappingDecrement(ordering: .sequentiallyConsistent)
    }

    /// Spins until `done` holds or monotonic time `deadline` (ns) has passed; returns whether `done` held.
    @_noLocks @inline(__always)
    public func spin(until deadline: Int, _ done: () -> Bool) -> Bool {
        while !done() {
            if MonotonicClock.nanos() >= deadline { return false }
            _unsafePerformance { gh_cpu_relax() }  // one `pause` instruction
        }
        return true
    }

    /// Returns once `done` holds.
    @_noLocks @inline(__always)
    public func wait(until done: () -> Bool) {
        if done() { return }
        let started = MonotonicClock.nanos()
        while MonotonicClock.nanos() - started < Self.spinNanos {
            _unsafePerformance { gh_cpu_relax() }  // one `pause` instruction
            if done() { return }
        }
        sleepers.wrappingIncrement(ordering: .sequentiallyConsistent)
        while true {
            let seen = counter.load(ordering: .sequentiallyConsistent)
            if done() { break }
            // FUTEX_WAIT sleeps in the kernel until the word changes from `seen`; no lock is held.
            _unsafePerformance { gh_futex_wait(address, seen) }
        }
        sleepers.wrappingDecrement(ordering: .sequentiallyConsistent)
    }
}
