import Glibc

/// CLOCK_MONOTONIC in nanoseconds, callable from the render world.
public enum MonotonicClock {
    @_noLocks @inline(__always)
    public static func nanos() -> Int {
        var ts = timespec()
        // clock_gettime(CLOCK_MONOTONIC) is served by the vDSO: no lock, no allocation, no syscall.
        _ = _unsafePerformance { clock_gettime(CLOCK_MONOTONIC, &ts) }
        return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
    }
}
