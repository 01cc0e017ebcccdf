import Atomics

/// The two monotonically increasing counters of a single-producer/single-consumer ring.
/// The producer only stores `written`, the consumer only stores `read`; both are lock-free.
/// It is shared by exactly one producer thread and one consumer thread (the contract the compiler cannot check).
public struct SPSCIndex: @unchecked Sendable {
    public let written: UnsafeAtomic<Int>
    public let read: UnsafeAtomic<Int>
    public let capacity: Int

    public static func create(capacity: Int) -> SPSCIndex {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0, "capacity must be a power of two")
        return SPSCIndex(written: .create(0), read: .create(0), capacity: capacity)
    }

    public func destroy() {
        written.destroy()
        read.destroy()
    }

    /// Items the consumer may read now.
    @_noLocks @inline(__always)
    public func readable() -> Int {
        written.load(ordering: .acquiring) &- read.load(ordering: .relaxed)
    }

    /// Items the producer may write now.
    @_noLocks @inline(__always)
    public func writable() -> Int {
        capacity &- (written.load(ordering: .relaxed) &- read.load(ordering: .acquiring))
    }
}
