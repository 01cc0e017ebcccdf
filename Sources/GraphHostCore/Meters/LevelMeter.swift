import Atomics

/// A level meter of one planar bus: per channel the sample peak and the RMS over the last 300 ms (30 blocks of
/// 10 ms), a peak held for 2 s, and the count of clipped samples (|x| ≥ 1) since the meter was turned on. The render
/// world measures each slice while it is on and publishes the readings under a seqlock; the control world reads them
/// without waiting on the render world. All its memory comes from the control world (`allocate`).
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

    /// A channel's running state: the block being filled, the held peak and the clip count.
    struct ChannelState {
        var squares: Float = 0
        var peak: Float = 0
        var held: Float = 0
        var holdLeft = 0
        var clips = 0
        /// The window's finished blocks' sum of squares, kept up as blocks come and go (exactly 0 when none of them
        /// holds sound), and their peak.
        var windowSquares: Double = 0
        var windowPeak: Float = 0
        /// The window's blocks with a sum of squares above 0.
        var soundingBlocks = 0
    }

    public static let windowBlocks = 30
    /// Slots a channel keeps for its window's blocks: `windowBlocks` rounded up to whole vectors, the rest zero.
    static let windowSlots = 32
    public static let blockSeconds = 0.01
    public static let holdSeconds = 2.0

    public let channels: Int
    let blockFrames: Int
    let holdFrames: Int
    /// Whether the render world measures; the control world turns it on and off.
    public let isOn: UnsafeAtomic<Bool>
    let sequence: UnsafeAtomic<Int>
    let published: UnsafeMutablePointer<Reading>
    let state: UnsafeMutablePointer<ChannelState>
    /// Sum of squares and peak of each finished block, `channels × windowSlots`, zero where no block is.
    let blockSquares: UnsafeMutablePointer<Float>
    let blockPeaks: UnsafeMutablePointer<Float>
    /// One run's sum of squares and peak per channel, as the run loop leaves them.
    let runSquares: UnsafeMutablePointer<Float>
    let runPeaks: UnsafeMutablePointer<Float>
    var blockIndex = 0
    var framesInBlock = 0
    var filledBlocks = 0
    var measuring = false

    /// A meter for `channels` channels at `sampleRate`, on or off (control world only). One allocation holds the
    /// meter, its flags, its channels' state and readings, then the window's slots: a slice touches a few
    /// neighbouring cache lines, not one per part.
    public static func allocate(channels: Int, sampleRate: Double, on: Bool) -> UnsafeMutablePointer<LevelMeter> {
        func aligned(_ offset: Int, _ alignment: Int) -> Int { (offset + alignment - 1) / alignment * alignment }
        let sequenceAt = aligned(MemoryLayout<LevelMeter>.stride, MemoryLayout<UnsafeAtomic<Int>.Storage>.alignment)
        let onAt = sequenceAt + MemoryLayout<UnsafeAtomic<Int>.Storage>.stride
        let stateAt = aligned(
            onAt + MemoryLayout<UnsafeAtomic<Bool>.Storage>.stride, MemoryLayout<ChannelState>.alignment)
        let publishedAt = aligned(
            stateAt + channels * MemoryLayout<ChannelState>.stride, MemoryLayout<Reading>.alignment)
        let slotsAt = aligned(publishedAt + channels * MemoryLayout<Reading>.stride, 64)
        let window = channels * windowSlots
        let floats = 2 * window + 2 * channels
        let raw = UnsafeMutableRawPointer.allocateRender(
            byteCount: slotsAt + floats * MemoryLayout<Float>.stride, alignment: 64)
        let sequence = raw.advanced(by: sequenceAt).bindMemory(to: UnsafeAtomic<Int>.Storage.self, capacity: 1)
        sequence.initialize(to: UnsafeAtomic<Int>.Storage(0))
        let isOn = raw.advanced(by: onAt).bindMemory(to: UnsafeAtomic<Bool>.Storage.self, capacity: 1)
        isOn.initialize(to: UnsafeAtomic<Bool>.Storage(on))
        let state = raw.advanced(by: stateAt).bindMemory(to: ChannelState.self, capacity: channels)
        state.initialize(repeating: ChannelState(), count: channels)
        let published = raw.advanced(by: publishedAt).bindMemory(to: Reading.self, capacity: channels)
        published.initialize(repeating: Reading(), count: channels)
        let slots = raw.advanced(by: slotsAt).bindMemory(to: Float.self, capacity: floats)
        slots.initialize(repeating: 0, count: floats)
        let meter = raw.bindMemory(to: LevelMeter.self, capacity: 1)
        meter.initialize(
            to: LevelMeter(
                channels: channels, blockFrames: max(1, Int((sampleRate * blockSeconds).rounded())),
                holdFrames: Int(sampleRate * holdSeconds), isOn: UnsafeAtomic(at: isOn),
                sequence: UnsafeAtomic(at: sequence), published: published, state: state, blockSquares: slots,
                blockPeaks: slots + window, runSquares: slots + 2 * window,
                runPeaks: slots + 2 * window + channels))
        return meter
    }

    /// Frees a meter from `allocate` (control world only; nothing may measure it any more).
    public static func deallocate(_ meter: UnsafeMutablePointer<LevelMeter>) {
        let channels = meter.pointee.channels
        meter.pointee.published.deinitialize(count: channels)
        meter.pointee.state.deinitialize(count: channels)
        meter.deinitialize(count: 1)
        UnsafeMutableRawPointer(meter).deallocateRender()
    }

    /// Measures `frames` frames of `bus` (channel c at `bus + c * channelStride`) if the meter is on, and publishes.
    /// A meter turned on again starts afresh (window, held peak and clip count).
    @_noLocks
    public mutating func measure(_ bus: UnsafeMutablePointer<Float>, channelStride: Int, frames: Int) {
        guard isOn.load(ordering: .relaxed) else {
            measuring = false
            return
        }
        if !measuring { reset() }
        var done = 0
        while done < frames {
            let n = min(frames - done, blockFrames - framesInBlock)
            SampleRunLevels.measure(
                bus + done, channelStride: channelStride, channels: channels, count: n, squares: runSquares,
                peaks: runPeaks)
            for c in 0..<channels {
                state[c].squares += runSquares[c]
                if runPeaks[c] > state[c].peak { state[c].peak = runPeaks[c] }
                // Clipping is rare: only a run that reaches full scale is counted, in a second pass.
                if runPeaks[c] >= 1 {
                    state[c].clips += SampleRunLevels.clips(bus + c * channelStride + done, count: n)
                }
            }
            framesInBlock += n
            done += n
            if framesInBlock == blockFrames { closeBlock() }
        }
        publish(frames: frames)
    }

    @_noLocks
    mutating func reset() {
        measuring = true
        blockIndex = 0
        framesInBlock = 0
        filledBlocks = 0
        for c in 0..<channels { state[c] = ChannelState() }
        blockSquares.update(repeating: 0, count: channels * Self.windowSlots)
        blockPeaks.update(repeating: 0, count: channels * Self.windowSlots)
    }

    /// Files the block just filled in each channel's window in place of the oldest, updating the window's sum and
    /// peak without summing it again (its peak is looked for again only when the oldest block held it).
    @_noLocks
    mutating func closeBlock() {
        for c in 0..<channels {
            let slot = c * Self.windowSlots + blockIndex
            // A non-finite sample (a plugin's NaN) counts as silence rather than spoiling the window.
            let squares = state[c].squares.isFinite ? state[c].squares : 0
            let peak = state[c].peak
            let oldSquares = blockSquares[slot]
            let oldPeak = blockPeaks[slot]
            blockSquares[slot] = squares
            blockPeaks[slot] = peak
            state[c].squares = 0
            state[c].peak = 0
            if oldSquares > 0 { state[c].soundingBlocks -= 1 }
            if squares > 0 { state[c].soundingBlocks += 1 }
            state[c].windowSquares =
                state[c].soundingBlocks == 0 ? 0 : state[c].windowSquares + Double(squares) - Double(oldSquares)
            if peak >= state[c].windowPeak {
                state[c].windowPeak = peak
            } else if oldPeak >= state[c].windowPeak {
                state[c].windowPeak = Self.peak(blockPeaks + (slot - blockIndex))
            }
        }
        blockIndex = blockIndex + 1 == Self.windowBlocks ? 0 : blockIndex + 1
        framesInBlock = 0
        if filledBlocks < Self.windowBlocks { filledBlocks += 1 }
    }

    /// The largest of a channel's block peaks, none of them NaN, in four scalar chains (LLVM makes vector maxima that
    /// end in a scalar into masks and blends, which cost more).
    @_noLocks
    static func peak(_ p: UnsafeMutablePointer<Float>) -> Float {
        var m0: Float = 0
        var m1: Float = 0
        var m2: Float = 0
        var m3: Float = 0
        for k in stride(from: 0, to: windowSlots, by: 4) {
            if p[k] > m0 { m0 = p[k] }
            if p[k + 1] > m1 { m1 = p[k + 1] }
            if p[k + 2] > m2 { m2 = p[k + 2] }
            if p[k + 3] > m3 { m3 = p[k + 3] }
        }
        return max(max(m0, m1), max(m2, m3))
    }

    /// Writes every channel's reading between two increments of `sequence` (odd while writing).
    @_noLocks
    mutating func publish(frames: Int) {
        let count = filledBlocks * blockFrames + framesInBlock
        let s = sequence.load(ordering: .relaxed)
        sequence.store(s &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        for c in 0..<channels {
            let squares = state[c].squares
            let sum = max(0, Double(squares.isFinite ? squares : 0) + state[c].windowSquares)
            let peak = max(state[c].peak, state[c].windowPeak)
            if peak >= state[c].held {
                state[c].held = peak
                state[c].holdLeft = holdFrames
            } else if state[c].holdLeft > frames {
                state[c].holdLeft -= frames
            } else {
                state[c].held = peak
                state[c].holdLeft = holdFrames
            }
            published[c].peak = peak
            published[c].heldPeak = state[c].held
            published[c].meanSquare = count > 0 ? Float(sum / Double(count)) : 0
            published[c].clips = state[c].clips
        }
        sequence.store(s &+ 2, ordering: .releasing)
    }

    /// The latest readings, one per channel, or nil when the meter is off or the render world kept publishing
    /// through every attempt (control world; it never waits).
    public func read() -> [Reading]? {
        guard isOn.load(ordering: .relaxed) else { return nil }
        var readings = [Reading](repeating: Reading(), count: channels)
        for _ in 0..<64 {
            let before = sequence.load(ordering: .acquiring)
            guard before & 1 == 0 else { continue }
            for c in 0..<channels { readings[c] = published[c] }
            atomicMemoryFence(ordering: .acquiring)
            if sequence.load(ordering: .relaxed) == before { return readings }
        }
        return nil
    }
}
