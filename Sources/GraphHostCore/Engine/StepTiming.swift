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

extension RenderStep.Kernel {
    /// The kernel's memory address: its identity across plans.
    public var address: UnsafeMutableRawPointer? {
        @_noLocks get {
            switch self {
            case .stream(let k): return UnsafeMutableRawPointer(k)
            case .mixer(let k): return UnsafeMutableRawPointer(k)
            case .ipodEQ(let k): return UnsafeMutableRawPointer(k)
            case .lv2(let k): return UnsafeMutableRawPointer(k)
            case .crossfade(let k): return UnsafeMutableRawPointer(k)
            case .midi(let k): return UnsafeMutableRawPointer(k)
            case .output: return nil
            }
        }
    }
}
