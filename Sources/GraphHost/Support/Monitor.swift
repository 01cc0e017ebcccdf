import Foundation

/// State shared by threads that must sleep until another thread changes it (a buffer's reader and writer): one
/// lock with a condition. The state is reachable only inside `withLock` and `wait`, so it is never touched
/// unlocked; every `withLock` wakes the waiters, which look again. `Mutex` is the choice where nobody waits.
final class Monitor<State>: @unchecked Sendable {
    private let condition = NSCondition()
    private var state: State

    init(_ state: sending State) { self.state = state }

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
