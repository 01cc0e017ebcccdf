/// Memory for heard-at-once band changes of a `peq` node: the recent input, and banks the control world warmed on it.
/// Prepared by the control world; channel c of the history ring starts at `c * historyCapacity`.
public struct PEQWorkspace {
    public let history: InputHistory
    /// `warmedSlots` banks (`bandCount` sections each) and their states (`bandCount` per channel) that the control
    /// world warmed, taken in `slots`.
    public let warmedSections: UnsafeMutablePointer<PEQSection>
    public let warmedStates: UnsafeMutablePointer<SIMD2<Double>>
    public let slots: WarmedSlots
    public let channels: Int
    public let bandCount: Int

    /// Input a new bank is warmed on: as long as the longest settling a bank is given (`PEQKernel.maxSettleFrames`).
    public static var historyFrames: Int { @_noLocks get { PEQKernel.maxSettleFrames } }
    /// The ring holds half as much again, so the frames a warm reads stay whole while the render world writes on
    /// (for 0.68 s at 48 kHz); 384 KiB a channel.
    public static var historyCapacity: Int { @_noLocks get { historyFrames + historyFrames / 2 } }
    public static let warmedSlots = 8

    public static func allocate(channels: Int, bands: Int) -> PEQWorkspace {
        let bands = max(1, bands)
        let w = PEQWorkspace(
            history: .allocate(channels: channels, capacity: historyCapacity),
            warmedSections: .allocateRender(capacity: warmedSlots * bands),
            warmedStates: .allocateRender(capacity: warmedSlots * bands * channels),
            slots: .create(count: warmedSlots), channels: channels, bandCount: bands)
        w.warmedSections.initialize(
            repeating: PEQSection(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0, settleFrames: 0), count: warmedSlots * bands)
        w.warmedStates.initialize(repeating: SIMD2(), count: warmedSlots * bands * channels)
        return w
    }

    public func deallocate() {
        history.deallocate()
        warmedSections.deallocateRender()
        warmedStates.deallocateRender()
        slots.destroy()
    }

    /// Control world: runs `bank` from rest over as many of the newest frames of input the render world has remembered
    /// as it needs to settle (at most `historyFrames`), into a free slot; for a `PEQKernel.Change.warmed`, which leaves
    /// the render world only the frames remembered since to run. Nil when every slot is taken, or when the render world
    /// wrote, or had begun to write, over those frames while they were read (the bank then warms on the live input).
    public func warm(_ bank: [PEQSection]) -> (slot: Int, through: Int)? {
        precondition(bank.count <= bandCount)
        guard let slot = slots.free() else { return nil }
        let sections = warmedSections + slot * bandCount
        let state = warmedStates + slot * bandCount * channels
        for (b, section) in bank.enumerated() { sections[b] = section }
        state.update(repeating: SIMD2(), count: bandCount * channels)
        let settle = bank.reduce(0) { max($0, min($1.settleFrames, Self.historyFrames)) }
        let read = history.read(newest: settle) { through in
            for c in 0..<channels {
                PEQKernel.run(
                    sections, state: state + c * bandCount, count: bank.count,
                    ring: history.samples + c * Self.historyCapacity, from: through - settle, to: through)
            }
        }
        guard let through = read else { return nil }
        slots.take(slot)
        return (slot, through)
    }
}
