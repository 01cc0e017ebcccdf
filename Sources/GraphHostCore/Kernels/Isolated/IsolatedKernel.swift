import Atomics
import Glibc

/// The render side of a plugin node that runs in a helper process: the node runs one block late. Each render call
/// collects the block posted by the previous call (the helper's output, or its dry input when the helper did not
/// finish in time), posts this call's input, and plays `latency` frames behind its input from a FIFO: the frames
/// ready plus the frames in flight always make `latency`. The render world never waits live; offline it waits for
/// the helper at most `offlineWaitMillis` per block.
public struct IsolatedKernel {
    public let block: IsolatedBlock
    /// The eventfd the helper waits on, and the one it signals after each block.
    public let wakeFD: Int32
    public let doneFD: Int32
    public var latency: Int { block.frames }
    /// A plugin without audio inputs (an instrument) has no dry signal: a missed block is silence.
    public let dryIsSilence: Bool
    /// This node's input for the block in flight (`latency` frames per channel): its dry signal.
    let pending: UnsafeMutablePointer<Float>
    /// Output ready to play, `latency` frames per channel, the oldest first.
    let fifo: UnsafeMutablePointer<Float>
    /// The last frame appended to the FIFO per channel, and the jump being decayed after a switch to the dry signal.
    let last: UnsafeMutablePointer<Float>
    let jump: UnsafeMutablePointer<Float>
    var jumpLeft = 0
    static let jumpSamples = 64
    var ready: Int
    var pendingFrames = 0
    /// The sequence number of the block in flight, 0 when it could not be posted (the helper was busy or gone).
    var pendingSequence = 0
    /// How much of the helper's output is heard versus the dry signal: 0 after a missed block, gliding back to 1.
    var wet = SmoothedGain(1)
    public let fadeSamples: Int
    /// Milliseconds to wait for each block when rendering offline; 0 live.
    public var offlineWaitMillis: Int32
    /// Blocks missed in a row (the supervisor's hang check) and in all.
    public let missedInARow: UnsafeAtomic<Int>
    public let missed: UnsafeAtomic<Int>
    /// Set once the supervisor has stopped restarting the helper: the node plays dry and never waits.
    public let retired: UnsafeAtomic<Bool>

    /// `pending`, `fifo`, `last` and `jump` are render memory of `channels` × `latency` (the last two `channels`).
    public init(
        block: IsolatedBlock, wakeFD: Int32, doneFD: Int32, dryIsSilence: Bool, fadeSamples: Int,
        offlineWaitMillis: Int32,
        pending: UnsafeMutablePointer<Float>, fifo: UnsafeMutablePointer<Float>, last: UnsafeMutablePointer<Float>,
        jump: UnsafeMutablePointer<Float>
    ) {
        self.block = block
        self.wakeFD = wakeFD
        self.doneFD = doneFD
        self.dryIsSilence = dryIsSilence
        self.fadeSamples = fadeSamples
        self.offlineWaitMillis = offlineWaitMillis
        self.pending = pending
        self.fifo = fifo
        self.last = last
        self.jump = jump
        ready = block.frames
        missedInARow = .create(0)
        missed = .create(0)
        retired = .create(false)
        let count = block.channels * block.frames
        pending.initialize(repeating: 0, count: count)
        fifo.initialize(repeating: 0, count: count)
        last.initialize(repeating: 0, count: block.channels)
        jump.initialize(repeating: 0, count: block.channels)
    }

    /// Frees the counters (control world, once nothing renders).
    public func destroy() {
        missedInARow.destroy()
        missed.destroy()
        retired.destroy()
    }

    /// Whether the helper has finished the block in flight, waiting for it offline.
    @_noLocks
    mutating func helperFinished() -> Bool {
        waitOffline(for: pendingSequence)
        return block.done.load(ordering: .acquiring) == pendingSequence && answered
    }

    /// Whether the helper has finished block `posted` and may take the next; offline, waits for it (a helper that
    /// is being restarted marks the block done once it runs).
    @_noLocks
    mutating func helperIdle(_ posted: Int) -> Bool {
        waitOffline(for: posted)
        return block.done.load(ordering: .acquiring) == posted
    }

    /// Offline (and while the helper is not retired), waits until the helper has done block `sequence`, at most
    /// `offlineWaitMillis` × 2 in all.
    @_noLocks
    mutating func waitOffline(for sequence: Int) {
        var waits = 0
        while block.done.load(ordering: .acquiring) != sequence && offlineWaitMillis > 0 && waits < 8
            && !retired.load(ordering: .relaxed)
        {
            var ready = pollfd(fd: doneFD, events: Int16(POLLIN), revents: 0)
            // Offline only (a render thread never comes here): a bounded wait for the helper's answer.
            let woke = _unsafePerformance { poll(&ready, 1, offlineWaitMillis / 4) }
            if woke > 0 {
                var value: UInt64 = 0
                _ = _unsafePerformance { read(doneFD, &value, 8) }
            } else if woke == 0 {
                waits += 1
            }
        }
    }

    /// Whether the output area holds the answer to the block in flight.
    var answered: Bool {
        @_noLocks get { block.answered.load(ordering: .acquiring) == pendingSequence }
    }

    /// Appends the block in flight to the FIFO: the helper's output blended with the dry signal, or (the helper late,
    /// gone, or its output unsafe to hear) the dry signal alone with the jump from the last frame decayed over
    /// `jumpSamples`.
    @_noLocks
    mutating func collect() {
        let frames = pendingFrames
        guard frames > 0 else { return }
        let stride = block.frames
        let channels = block.channels
        let into = fifo + ready
        // The helper's kernel silences unsafe slices itself; one that wrote garbage into the shared block is not heard.
        if pendingSequence != 0 && helperFinished()
            && Bus.isSafe(block.output, channelStride: stride, channels: channels, frames: frames)
        {
            for c in 0..<channels {
                let from = block.output + c * stride
                let to = into + c * stride
                for f in 0..<frames { to[f] = from[f] }
            }
            if wet.target == 0 { wet.glide(to: 1, over: fadeSamples) }
            wet.blend(input: pending, output: into, channelStride: stride, channels: channels, frames: frames)
            missedInARow.store(0, ordering: .relaxed)
        } else {
            for c in 0..<channels {
                let from = pending + c * stride
                let to = into + c * stride
                for f in 0..<frames { to[f] = dryIsSilence ? 0 : from[f] }
            }
            if wet.current != 0 || !wet.isSteady {
                for c in 0..<channels { jump[c] = last[c] - into[c * stride] }
                jumpLeft = Self.jumpSamples
            }
            wet.glide(to: 0, over: 0)
            missedInARow.wrappingIncrement(ordering: .relaxed)
            missed.wrappingIncrement(ordering: .relaxed)
        }
        if jumpLeft > 0 {
            let decay = min(jumpLeft, frames)
            for c in 0..<channels {
                let to = into + c * stride
                for f in 0..<decay { to[f] += jump[c] * Float(jumpLeft - f) / Float(Self.jumpSamples) }
            }
            jumpLeft -= decay
        }
        for c in 0..<channels { last[c] = into[c * stride + frames - 1] }
        ready += frames
        pendingFrames = 0
    }

    /// Posts `frames` ≤ `latency` frames of `input` to the helper when it is idle; they are the block in flight
    /// either way.
    @_noLocks
    mutating func post(_ input: UnsafeMutablePointer<Float>, channelStride: Int, frames: Int) {
        let stride = block.frames
        for c in 0..<block.channels {
            let from = input + c * channelStride
            let to = pending + c * stride
            for f in 0..<frames { to[f] = from[f] }
        }
        pendingFrames = frames
        pendingSequence = 0
        let posted = block.posted.load(ordering: .relaxed)
        guard helperIdle(posted) else { return }
        for c in 0..<block.channels {
            let from = pending + c * stride
            let to = block.input + c * stride
            for f in 0..<frames { to[f] = from[f] }
        }
        block.postedFrames.store(frames, ordering: .relaxed)
        block.posted.store(posted + 1, ordering: .releasing)
        pendingSequence = posted + 1
        var one: UInt64 = 1
        // An eventfd write never blocks while its counter is far below its maximum.
        _ = _unsafePerformance { write(wakeFD, &one, 8) }
    }
}

extension IsolatedKernel: RenderKernel {
    @_noLocks
    public mutating func render(_ step: RenderStep, _ slice: RenderSlice) {
        guard let output = step.output else { return }
        let input = step.inputs[0]
        let frames = slice.frames
        let stride = block.frames
        let channels = min(slice.channels, block.channels)
        collect()
        let played = min(frames, ready)
        for c in 0..<channels {
            let from = fifo + c * stride
            let to = output + c * slice.channelStride
            for f in 0..<played { to[f] = from[f] }
            for f in played..<ready { from[f - played] = from[f] }
            // A call longer than the latency: its first frames were never posted, and play dry.
            let dry = input + c * slice.channelStride
            for f in played..<frames { to[f] = dryIsSilence ? 0 : dry[f - played] }
        }
        ready -= played
        let posted = min(frames, stride)
        post(input + (frames - posted), channelStride: slice.channelStride, frames: posted)
    }
}
