/// The timing of render calls: the slowest step of the current call (how long it took and which kernel it ran, by
/// address, so the control world can name the node that made a callback overrun its quantum), and every step's and
/// call's time in `load` (`DSPLoadRecorder`).
public struct StepTiming {
    public var slowestNanos = 0
    public var slowestKernel: UnsafeMutableRawPointer?
    /// Every step's time so far, summed (the engine subtracts it from a slice's time to time the output work).
    public var stepNanos = 0
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
        stepNanos += nanos
        guard nanos > slowestNanos else { return }
        slowestNanos = nanos
        slowestKernel = address
    }

    /// Notes the output work of a slice that began at `started` (monotonic ns) when `stepNanos` read `steps`: the
    /// slice's time less its steps'.
    @_noLocks
    mutating func noteOutputs(sliceStarted started: Int, steps: Int) {
        load.noteOutputs(MonotonicClock.nanos() - started - (stepNanos - steps))
    }

    /// Publishes the call that began at `started` (monotonic ns) and rendered `frames`.
    @_noLocks
    mutating func finishCall(started: Int, frames: Int) {
        load.finishCall(nanos: MonotonicClock.nanos() - started, frames: frames)
    }
}
