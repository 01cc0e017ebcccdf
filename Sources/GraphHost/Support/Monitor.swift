import FoundationEssentials
import Glibc

/// State shared by threads that must sleep until another thread changes it (a buffer's reader and writer): one
/// lock with a condition. The state is reachable only inside `withLock` and `wait`, so it is never touched
/// unlocked; every `withLock` wakes the waiters, which look again. `Mutex` is the choice where nobody waits.
final class Monitor<State>: @unchecked Sendable {
    private let condition = Condition()
    private var state: State

    init(_ state: sending State) { self.state = state }

    /// A pthread mutex with its condition variable.
    private final class Condition {
        private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

        init() {
            pthread_mutex_init(mutex, nil)
            pthread_cond_init(cond, nil)
        }

        deinit {
            pthread_cond_destroy(cond)
            pthread_mutex_destroy(mutex)
            cond.deallocate()
            mutex.deallocate()
        }

        func lock() { pthread_mutex_lock(mutex) }
        func unlock() { pthread_mutex_unlock(mutex) }
        func broadcast() { pthread_cond_broadcast(cond) }
        func wait() { pthread_cond_wait(cond, mutex) }

        /// False once `deadline` has passed.
        func wait(until deadline: Date) -> Bool {
            let seconds = deadline.timeIntervalSince1970
            guard seconds > Date().timeIntervalSince1970 else { return false }
            var time = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
            return pthread_cond_timedwait(cond, mutex, &time) == 0 || Date().timeIntervalSince1970 < seconds
        }
    }

    /// Reads or changes the state, then wakes every waiter.
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&state)
    }

    /// Sleeps until `ready` holds, then runs `body` under the same lock and wakes every waiter.
    func wait<R>(until ready: (State) -> Bool, then body: (inout State) throws -> R) rethrows -> R {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        while !ready(state) { condition.wait() }
        return try body(&state)
    }

    /// Sleeps until `ready` holds or `deadline` passes, then runs `body` under the same lock.
    func wait<R>(until ready: (State) -> Bool, deadline: Date, then body: (inout State) throws -> R) rethrows -> R {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        while !ready(state) && condition.wait(until: deadline) {}
        return try body(&state)
    }
}
