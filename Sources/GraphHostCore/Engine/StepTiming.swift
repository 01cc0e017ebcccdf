/// The timing of render calls: the slowest step of the current call (how long it took and which kernel it ran, by
/// address, so the control world can name the node that made a callback overrun its quantum), and every step's and
/// call's time in `load` (`DSPLoadRecorder`).
public struct StepTiming {
    public var slowestNanos = 0
    public var slowestKernel: UnsafeMutableRawPointer?
    /// Per kernel and per call: counts, sums, largest times and histograms.
    public var load = DSPLoadRecorder()

    /// Allocates `load`'s memory (control world only); `deallocate` frees it.
    public init() {}

    public func deallocate() { load.deallocate() }

    @_noLocks
    mutating func reset() {
        slowestNanos = 0
        slowestKernel = nil
    }

    @_noLocks
    mutating func note(_ nanos: Int, _ kernel: RenderStep.Kernel) {
        let address = kernel.address
        load.note(nanos, kernel: address)
        guard nanos > slowestNanos else { return }
        slowestNanos = nanos
        slowestKernel = address
    }

    /// Publishes the call that began at `started` (monotonic ns) and rendered `frames`.
    @_noLocks
    mutating func finishCall(started: Int, frames: Int) {
        load.finishCall(nanos: MonotonicClock.nanos() - started, frames: frames)
    }
}
