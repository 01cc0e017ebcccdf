import Atomics

/// Keeps a live input exactly one cycle behind the output, whatever order PipeWire runs the two callbacks in.
///
/// The input's callback stores the graph clock position of the cycle it last wrote (`writtenCycle`) and the frames it
/// writes a cycle (`cycleFrames`); the output's callback stores its own cycle's position (`outputCycle`) before it
/// renders. At the first slice of each output cycle the ring should hold the previous cycle's frames, and this cycle's
/// too when the input already ran. More than half a cycle beyond that is dropped (the output missed a cycle the input
/// did not); less is made up with silence played first (the input missed a cycle). So the latency is one cycle from
/// the start and stays there through late wake-ups, instead of depending on the order callbacks happened to run in.
public struct LiveInputAlignment {
    public let writtenCycle: UnsafeAtomic<UInt64>
    public let cycleFrames: UnsafeAtomic<Int>
    public let outputCycle: UnsafeAtomic<UInt64>
    /// The output cycle last aligned for.
    var alignedCycle: UInt64 = 0

    public init(writtenCycle: UnsafeAtomic<UInt64>, cycleFrames: UnsafeAtomic<Int>, outputCycle: UnsafeAtomic<UInt64>) {
        self.writtenCycle = writtenCycle
        self.cycleFrames = cycleFrames
        self.outputCycle = outputCycle
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
        let keep = writtenCycle.load(ordering: .acquiring) == cycle ? 2 * unit : unit
        if readable > keep + unit / 2 { return readable - keep }
        if readable > 0 && readable + unit / 2 < keep { return readable - keep }
        return 0
    }
}
