/// The slowest step of the current render call: how long it took and which kernel it ran (by address), so the
/// control world can name the node that made a callback overrun its quantum.
public struct StepTiming {
    public var slowestNanos = 0
    public var slowestKernel: UnsafeMutableRawPointer?

    public init() {}

    @_noLocks
    mutating func reset() {
        slowestNanos = 0
        slowestKernel = nil
    }

    @_noLocks
    mutating func note(_ nanos: Int, _ kernel: RenderStep.Kernel) {
        guard nanos > slowestNanos else { return }
        slowestNanos = nanos
        slowestKernel = kernel.address
    }
}
