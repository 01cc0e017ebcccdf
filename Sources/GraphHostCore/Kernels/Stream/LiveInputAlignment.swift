import Atomics

/// Keeps a live input in the output's cycle when the output runs after the inputs (`sameCycle`, a `CycleGate`), else
/// exactly one cycle behind the output, whatever order PipeWire runs the two callbacks in.
///
/// The input's callback stores the graph clock position of the cycle it last wrote (`writtenCycle`) and the frames it
/// writes a cycle (`cycleFrames`); the output's callback stores its own cycle's position (`outputCycle`) before it
/// renders. At the first slice of each output cycle the ring should hold this cycle's frames when the input already
/// ran, and one cycle before them unless `sameCycle`. More than half a cycle beyond that is dropped (the output missed
/// a cycle the input did not); less is made up with silence played first (the input missed a cycle). So the latency is
/// fixed from the start and stays there through late wake-ups, instead of depending on the order callbacks happened to
/// run in.
public struct LiveInputAlignment {
    public let writtenCycle: UnsafeAtomic<UInt64>
    public let cycleFrames: UnsafeAtomic<Int>
    public let outputCycle: UnsafeAtomic<UInt64>
    /// Set while the output runs in the inputs' cycle, after them.
    public let sameCycle: UnsafeAtomic<Bool>
    /// The output cycle last aligned for.
    var alignedCycle: UInt64 = 0

    public init(
        writtenCycle: UnsafeAtomic<UInt64>, cycleFrames: UnsafeAtomic<Int>, outputCycle: UnsafeAtomic<UInt64>,
        sameCycle: UnsafeAtomic<Bool>
    ) {
        self.writtenCycle = writtenCycle
        self.cycleFrames = cycleFrames
        self.outputCycle = outputCycle
        self.sameCycle = sameCycle
    }

    /// What to do at this slice given `readable` frames in the ring: drop that many frames first (positive), or play
    /// that many frames of silence first (negative). Zero except at the first slice of a new output cycle.
    @_noLocks
    public mutating func correction(readable: Int) -> Int {
        let cycle = outputCycle.load(ordering: .acquiring)
        guard cycle != alignedCycle else { return 0 }
        alignedCycle = cycle
        let unit = cycleFrames.load(ordering: .relaxed)
        guard unit > 0, cycle != 0 else { return 0 }
        let behind = sameCycle.load(ordering: .relaxed) ? 0 : unit
        let keep = behind + (writtenCycle.load(ordering: .acquiring) == cycle ? unit : 0)
        if readable > keep + unit / 2 { return readable - keep }
        if readable > 0 && readable + unit / 2 < keep { return readable - keep }
        return 0
    }
}
