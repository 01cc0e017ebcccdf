/// Memory for click-free coefficient changes: a second filter bank, its output, the recent input it is warmed on,
/// and states the control world warmed for it. Prepared by the control world; channel c of a buffer starts at
/// `c * stride` (`c * historyCapacity` in the history ring).
public struct IPodEQWorkspace {
    public let nextState: UnsafeMutablePointer<SIMD16<Float>>
    public let scratch: UnsafeMutablePointer<Float>
    public let history: InputHistory
    /// `warmedSlots` filter-bank states (`IPodEQKernel.stateVectors` per channel) the control world warmed, taken in
    /// `slots`.
    public let warmedStates: UnsafeMutablePointer<SIMD16<Float>>
    public let slots: WarmedSlots
    /// The control world's throwaway output while it warms a bank.
    public let controlScratch: UnsafeMutablePointer<Float>
    public let channels: Int
    public let stride: Int

    /// Input a new filter bank is warmed on: long enough for the 32 Hz band's ringing to die away.
    public static var historyFrames: Int { @_noLocks get { 16384 } }
    /// The ring holds twice that, so the newest `historyFrames` stay whole for as long again while the control world
    /// reads them.
    public static var historyCapacity: Int { @_noLocks get { 2 * historyFrames } }
    public static let warmedSlots = 4
    static let controlScratchFrames = 1024

    public static func allocate(channels: Int, maxFrames: Int) -> IPodEQWorkspace {
        let stride = max(maxFrames, historyFrames)
        let vectors = IPodEQKernel.stateVectors * channels
        let w = IPodEQWorkspace(
            nextState: .allocateRender(capacity: vectors), scratch: .allocateRender(capacity: channels * stride),
            history: .allocate(channels: channels, capacity: historyCapacity),
            warmedStates: .allocateRender(capacity: warmedSlots * vectors), slots: .create(count: warmedSlots),
            controlScratch: .allocate(capacity: channels * controlScratchFrames), channels: channels, stride: stride)
        w.nextState.initialize(repeating: SIMD16<Float>(), count: vectors)
        w.scratch.initialize(repeating: 0, count: channels * stride)
        w.warmedStates.initialize(repeating: SIMD16<Float>(), count: warmedSlots * vectors)
        w.controlScratch.initialize(repeating: 0, count: channels * controlScratchFrames)
        return w
    }

    public func deallocate() {
        nextState.deallocateRender()
        scratch.deallocateRender()
        history.deallocate()
        warmedStates.deallocateRender()
        slots.destroy()
        controlScratch.deallocate()
    }

    /// Control world: runs a bank with `coefficients`, from rest, over the newest `historyFrames` of input the render
    /// world has remembered, into a free slot; for an `IPodEQKernel.Change.warmed`, which leaves the render world
    /// only the frames remembered since to run. Nil when every slot is taken, or when the render world wrote, or had
    /// begun to write, over those frames while they were read (the render world then warms the bank itself).
    public func warm(_ coefficients: ParallelEQCoefficients) -> (slot: Int, through: Int)? {
        guard let slot = slots.free() else { return nil }
        let vectors = IPodEQKernel.stateVectors * channels
        let state = warmedStates + slot * vectors
        state.update(repeating: SIMD16<Float>(), count: vectors)
        let h = Self.historyFrames
        let capacity = Self.historyCapacity
        let chunk = Self.controlScratchFrames
        var bank = FilterBank.designed(coefficients)
        let read = history.read(newest: h) { through in
            var at = through - h
            while at < through {
                let from = (at % capacity + capacity) % capacity
                let n = min(through - at, capacity - from, chunk)
                IPodEQKernel.run(
                    &bank, state: state, input: history.samples + from, inputStride: capacity,
                    output: controlScratch, outputStride: chunk, channels: channels, frames: n)
                at += n
            }
        }
        guard let through = read else { return nil }
        slots.take(slot)
        return (slot, through)
    }
}
