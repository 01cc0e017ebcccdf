import Atomics

/// A level meter of one planar bus: per channel the sample peak and the RMS over the last 300 ms, the peak held for 2 s
/// after it left that window, and the count of clipped samples (|x| ≥ 1) since the meter was turned on.
///
/// The render world measures each slice while the meter is on (in a pass of its own, or the step's kernel as it
/// writes the slice: `runLevels`) and adds it to the block under way; a block gathers whole slices until it holds
/// 10 ms, then goes into a ring of finished blocks (its sums of squares, peaks and the clip counts so far) and the
/// count of finished blocks moves on. The control world reads the ring without
/// waiting on the render world and works out the window: the newest blocks that hold 300 ms (with slices longer than
/// 10 ms, 300 ms rounded up to a slice). All its memory comes from the control world (`allocate`).
public struct LevelMeter {
    /// One channel's reading, linear (1 is full scale); the control world takes the RMS's square root.
    public struct Reading: Equatable, Sendable {
        public var peak: Float = 0
        public var heldPeak: Float = 0
        /// The mean of the squared samples over the window.
        public var meanSquare: Float = 0
        public var clips: Int = 0

        public init() {}
    }

    public static let blockSeconds = 0.01
    /// The RMS and peak window, in blocks of `blockSeconds`.
    public static let windowBlocks = 30
    public static let holdSeconds = 2.0
    /// Finished blocks the ring keeps: more than the window and the hold at 10 ms a block, with room for the blocks
    /// the render world finishes while the control world reads.
    static let ringBlocks = 512

    public let channels: Int
    let blockFrames: Int
    let windowFrames: Int
    let holdFrames: Int
    /// Whether the render world measures; the control world turns it on and off.
    public let isOn: UnsafeAtomic<Bool>
    /// Blocks finished since the meter was made, and the count when measuring last began (the blocks before it are
    /// another measurement's).
    let finished: UnsafeAtomic<Int>
    let firstBlock: UnsafeAtomic<Int>
    /// The ring, `ringBlocks` slots: each slot's frames, and per slot and channel (slot × channels + channel) the sum
    /// of squares (0 for a block holding a non-finite sample: it counts as silence), the peak, and the clips counted
    /// from the start of the measurement to the end of that block.
    let slotFrames: UnsafeMutablePointer<Int>
    let slotSquares: UnsafeMutablePointer<Float>
    let slotPeaks: UnsafeMutablePointer<Float>
    let slotClips: UnsafeMutablePointer<Int>
    /// Per channel: the block under way's sum of squares and peak, and the clips so far.
    let openSquares: UnsafeMutablePointer<Float>
    let openPeaks: UnsafeMutablePointer<Float>
    let clips: UnsafeMutablePointer<Int>
    /// One slice's sum of squares and peak per channel, as the run loop leaves them.
    let runSquares: UnsafeMutablePointer<Float>
    let runPeaks: UnsafeMutablePointer<Float>
    var framesInBlock = 0
    var measuring = false
    /// The step's kernel measured this slice as it wrote it (`kernelMeasured`).
    var runTaken = false

    /// Where a kernel that measures its output as it writes it adds a slice's levels: per channel the sum of squares
    /// and the peak |x| (a NaN never raising it).
    public struct RunLevels {
        public let squares: UnsafeMutablePointer<Float>
        public let peaks: UnsafeMutablePointer<Float>

        @_noLocks
        public init(squares: UnsafeMutablePointer<Float>, peaks: UnsafeMutablePointer<Float>) {
            self.squares = squares
            self.peaks = peaks
        }

        /// The levels from channel `c` on.
        @_noLocks
        public func at(_ c: Int) -> RunLevels { RunLevels(squares: squares + c, peaks: peaks + c) }
    }

    /// A meter for `channels` channels at `sampleRate`, on or off (control world only). One allocation holds the
    /// meter, its counters, the render world's running sums, then the ring.
    public static func allocate(channels: Int, sampleRate: Double, on: Bool) -> UnsafeMutablePointer<LevelMeter> {
        func aligned(_ offset: Int, _ alignment: Int) -> Int { (offset + alignment - 1) / alignment * alignment }
        let intSize = MemoryLayout<Int>.stride
        let floatSize = MemoryLayout<Float>.stride
        let countersAt = aligned(MemoryLayout<LevelMeter>.stride, 64)
        let onAt = countersAt + 2 * MemoryLayout<UnsafeAtomic<Int>.Storage>.stride
        let runningAt = aligned(onAt + MemoryLayout<UnsafeAtomic<Bool>.Storage>.stride, 64)
        // Render-world running values: open squares and peaks, run squares and peaks (floats), clips (ints).
        let clipsAt = aligned(runningAt + 4 * channels * floatSize, intSize)
        let ringAt = aligned(clipsAt + channels * intSize, 64)
        let slotFramesAt = ringAt
        let slotClipsAt = slotFramesAt + ringBlocks * intSize
        let slotSquaresAt = slotClipsAt + ringBlocks * channels * intSize
        let slotPeaksAt = slotSquaresAt + ringBlocks * channels * floatSize
        let size = slotPeaksAt + ringBlocks * channels * floatSize
        let raw = UnsafeMutableRawPointer.allocateRender(byteCount: size, alignment: 64)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        let counters = raw.advanced(by: countersAt).bindMemory(to: UnsafeAtomic<Int>.Storage.self, capacity: 2)
        counters.initialize(repeating: UnsafeAtomic<Int>.Storage(0), count: 2)
        let isOn = raw.advanced(by: onAt).bindMemory(to: UnsafeAtomic<Bool>.Storage.self, capacity: 1)
        isOn.initialize(to: UnsafeAtomic<Bool>.Storage(on))
        let running = raw.advanced(by: runningAt).bindMemory(to: Float.self, capacity: 4 * channels)
        let blockFrames = max(1, Int((sampleRate * blockSeconds).rounded()))
        let meter = raw.bindMemory(to: LevelMeter.self, capacity: 1)
        meter.initialize(
            to: LevelMeter(
                channels: channels, blockFrames: blockFrames, windowFrames: windowBlocks * blockFrames,
                holdFrames: Int(sampleRate * holdSeconds), isOn: UnsafeAtomic(at: isOn),
                finished: UnsafeAtomic(at: counters), firstBlock: UnsafeAtomic(at: counters + 1),
                slotFrames: raw.advanced(by: slotFramesAt).bindMemory(to: Int.self, capacity: ringBlocks),
                slotSquares: raw.advanced(by: slotSquaresAt).bindMemory(
                    to: Float.self, capacity: ringBlocks * channels),
                slotPeaks: raw.advanced(by: slotPeaksAt).bindMemory(to: Float.self, capacity: ringBlocks * channels),
                slotClips: raw.advanced(by: slotClipsAt).bindMemory(to: Int.self, capacity: ringBlocks * channels),
                openSquares: running, openPeaks: running + channels,
                clips: raw.advanced(by: clipsAt).bindMemory(to: Int.self, capacity: channels),
                runSquares: running + 2 * channels, runPeaks: running + 3 * channels))
        return meter
    }

    /// Frees a meter from `allocate` (control world only; nothing may measure it any more).
    public static func deallocate(_ meter: UnsafeMutablePointer<LevelMeter>) {
        meter.deinitialize(count: 1)
        UnsafeMutableRawPointer(meter).deallocateRender()
    }

    /// Measures `frames` frames of `bus` (channel c at `bus + c * channelStride`) if the meter is on. A meter turned
    /// on again starts afresh (window, held peak and clip count).
    @_noLocks
    public mutating func measure(_ bus: UnsafeMutablePointer<Float>, channelStride: Int, frames: Int) {
        let taken = runTaken
        runTaken = false
        guard isOn.load(ordering: .relaxed) else {
            measuring = false
            return
        }
        if !measuring { restart() }
        if !taken {
            SampleRunLevels.measure(
                bus, channelStride: channelStride, channels: channels, count: frames, squares: runSquares,
                peaks: runPeaks)
        }
        for c in 0..<channels {
            openSquares[c] += runSquares[c]
            if runPeaks[c] > openPeaks[c] { openPeaks[c] = runPeaks[c] }
            // Clipping is rare: only a slice that reaches full scale is counted, in a second pass.
            if runPeaks[c] >= 1 { clips[c] += SampleRunLevels.clips(bus + c * channelStride, count: frames) }
        }
        framesInBlock += frames
        if framesInBlock >= blockFrames { finishBlock() }
    }

    /// The slice's levels for a kernel to add its output to, zeroed, when the meter is on and has `channels`
    /// channels; nil otherwise. A kernel that measured all of the slice's output says so with `kernelMeasured`.
    @_noLocks
    public func runLevels(channels: Int) -> RunLevels? {
        guard channels == self.channels && isOn.load(ordering: .relaxed) else { return nil }
        runSquares.update(repeating: 0, count: channels)
        runPeaks.update(repeating: 0, count: channels)
        return RunLevels(squares: runSquares, peaks: runPeaks)
    }

    /// The kernel filled `runLevels` with the whole slice's output: `measure` takes them instead of reading the bus.
    @_noLocks
    public mutating func kernelMeasured() { runTaken = true }

    @_noLocks
    mutating func restart() {
        measuring = true
        framesInBlock = 0
        for c in 0..<channels {
            openSquares[c] = 0
            openPeaks[c] = 0
            clips[c] = 0
        }
        firstBlock.store(finished.load(ordering: .relaxed), ordering: .releasing)
    }

    /// Puts the block under way in the ring, then counts it finished (the reader sees its slot only after that).
    @_noLocks
    mutating func finishBlock() {
        let block = finished.load(ordering: .relaxed)
        let slot = block & (Self.ringBlocks - 1)
        slotFrames[slot] = framesInBlock
        for c in 0..<channels {
            let at = slot * channels + c
            // A non-finite sample (a plugin's NaN) counts as silence rather than spoiling the window.
            slotSquares[at] = openSquares[c].isFinite ? openSquares[c] : 0
            slotPeaks[at] = openPeaks[c]
            slotClips[at] = clips[c]
            openSquares[c] = 0
            openPeaks[c] = 0
        }
        framesInBlock = 0
        finished.store(block &+ 1, ordering: .releasing)
    }

    /// The latest readings, one per channel, or nil when the meter is off or the render world kept overwriting the
    /// blocks being read through every attempt (control world; it never waits). The window is the newest blocks that
    /// hold `windowFrames`; the held peak the largest of the blocks `holdFrames` before them and theirs.
    public func read() -> [Reading]? {
        guard isOn.load(ordering: .relaxed) else { return nil }
        var readings = [Reading](repeating: Reading(), count: channels)
        var squares = [Double](repeating: 0, count: channels)
        for _ in 0..<64 {
            let first = firstBlock.load(ordering: .acquiring)
            let end = finished.load(ordering: .acquiring)
            for c in 0..<channels {
                readings[c] = Reading()
                squares[c] = 0
            }
            var frames = 0
            var spanned = 0
            var block = end
            // The oldest block a read may take: the render world may be writing the slot of `end - ringBlocks`.
            let oldest = max(first, end - Self.ringBlocks + Self.ringBlocks / 8)
            while block > oldest && spanned < windowFrames + holdFrames {
                block -= 1
                let slot = block & (Self.ringBlocks - 1)
                let inWindow = spanned < windowFrames
                for c in 0..<channels {
                    let at = slot * channels + c
                    let peak = slotPeaks[at]
                    if inWindow {
                        squares[c] += Double(slotSquares[at])
                        if peak > readings[c].peak { readings[c].peak = peak }
                    }
                    if peak > readings[c].heldPeak { readings[c].heldPeak = peak }
                    if block == end - 1 { readings[c].clips = slotClips[at] }
                }
                if inWindow { frames += slotFrames[slot] }
                spanned += slotFrames[slot]
            }
            atomicMemoryFence(ordering: .acquiring)
            guard firstBlock.load(ordering: .relaxed) == first,
                finished.load(ordering: .relaxed) - block < Self.ringBlocks
            else { continue }
            for c in 0..<channels where frames > 0 { readings[c].meanSquare = Float(squares[c] / Double(frames)) }
            return readings
        }
        return nil
    }
}
