/// The render side of the `ipod-eq` node: ten octave-band sections in parallel form, rendered a block of frames at a
/// time from their state-space form (`FilterBank`), so no frame waits on the one before it.
/// A new coefficient set starts a second filter bank, warmed on the last `historyFrames` of input so it is in its
/// steady state when heard, then crossfades linearly from the old bank's output to the new one's: at every instant
/// the output is a convex mix of two steady filters, never louder than the louder of them. A change that arrives
/// during a warm-up or crossfade starts when that one ends (only the latest is kept).
/// The control world warms the bank on the history ring before it sends the change (`IPodEQWorkspace.warm`); the
/// render world then runs it over the few frames that came since. A change that comes unwarmed is warmed here, at
/// once offline, and live spread over the calls that follow (`warmPace`), so no callback carries the burst.
public struct IPodEQKernel {
    /// Length of the crossfade to new coefficients, in seconds.
    public static let rampSeconds = 0.030
    /// New coefficients (crossfaded over `rampSamples`), or bypass on or off.
    public enum Change {
        /// Coefficients whose bank starts from rest on the input history.
        case coefficients(ParallelEQCoefficients)
        /// Coefficients whose bank the control world ran over the input up to frame `through`; its state waits in the
        /// workspace's warmed slot `slot`.
        case warmed(ParallelEQCoefficients, through: Int, slot: Int)
        case bypass(Bool)
    }

    /// Vectors of filter-bank state a channel takes (its `GH_FILTER_BANK_STATE` floats); callers allocate
    /// `stateVectors * channels` of them, zeroed.
    public static var stateVectors: Int { @_noLocks get { FilterBank.stateFloats / SIMD16<Float>.scalarCount } }
    /// The filter bank's state, `stateVectors` per channel.
    public var state: UnsafeMutablePointer<SIMD16<Float>>
    public var current = ParallelEQCoefficients()
    /// What the render loop runs: `current` and `next` in state-space form.
    var currentBank: FilterBank
    var nextBank: FilterBank
    let workspace: IPodEQWorkspace?
    var next = ParallelEQCoefficients()
    var pending = ParallelEQCoefficients()
    var hasPending = false
    /// The warmed slot and frame of the pending change, when the control world warmed it.
    var pendingWarmed: (slot: Int, through: Int)?
    var fade = SmoothedGain(0)
    var fading = false
    /// Input frames put in the history ring so far.
    var remembered = 0
    /// Frames of history the second bank has still to run before it is level with the input (while warming).
    var warmBehind = 0
    var warming = false
    /// History frames a call may warm per frame it renders. 0 warms a new bank at once (offline, where no deadline
    /// waits). Live, `liveWarmPace`: at most three frames of warm-up per frame rendered, so an unwarmed change
    /// costs no burst and its bank catches up with the input `historyFrames / 2` frames later (170 ms at 48 kHz).
    public var warmPace = 0
    public static let liveWarmPace = 3
    /// How much of the filtered signal is heard; bypass glides it to 0 (the filter keeps running, so
    /// un-bypassing is clean).
    var wet = SmoothedGain(1)
    let rampSamples: Int

    /// Without a workspace, coefficient changes apply at once (for measurements and tests).
    public init(
        state: UnsafeMutablePointer<SIMD16<Float>>, coefficients: ParallelEQCoefficients, rampSamples: Int,
        workspace: IPodEQWorkspace? = nil
    ) {
        self.state = state
        self.current = coefficients
        self.currentBank = FilterBank.designed(coefficients)
        self.nextBank = currentBank
        self.rampSamples = rampSamples
        self.workspace = workspace
    }

    @_noLocks
    public mutating func apply(_ change: Change) {
        let warmed: (slot: Int, through: Int)?
        switch change {
        case .bypass(let on):
            wet.glide(to: on ? 0 : 1, over: rampSamples)
            return
        case .coefficients(let c):
            pending = c
            warmed = nil
        case .warmed(let c, let through, let slot):
            pending = c
            warmed = (slot, through)
        }
        // A change that waited is replaced: only the latest is kept.
        if let replaced = pendingWarmed { workspace?.slots.release(slot: replaced.slot) }
        pendingWarmed = warmed
        hasPending = true
        if workspace == nil || rampSamples == 0 {
            current = pending
            currentBank = FilterBank.designed(current)
            hasPending = false
            if let taken = pendingWarmed { workspace?.slots.release(slot: taken.slot) }
            pendingWarmed = nil
        } else if !fading && !warming {
            startWarming()
        }
    }

    /// Starts over on `coefficients` with no change under way (an LV2 plugin's activate): a slot held by a waiting
    /// change is given back, and the history count goes on, so a warm the control world has under way is still
    /// checked against the frames written since. The caller clears `state`.
    public mutating func restart(coefficients: ParallelEQCoefficients) {
        if let held = pendingWarmed { workspace?.slots.release(slot: held.slot) }
        var fresh = IPodEQKernel(
            state: state, coefficients: coefficients, rampSamples: rampSamples, workspace: workspace)
        fresh.warmPace = warmPace
        fresh.remembered = remembered
        self = fresh
    }

    /// Starts the pending coefficients on the second bank: from the state the control world warmed, when the ring
    /// still holds every frame since, or else from rest on the whole history.
    @_noLocks
    mutating func startWarming() {
        guard let w = workspace else { return }
        next = pending
        nextBank = FilterBank.designed(next)
        hasPending = false
        warmBehind = IPodEQWorkspace.historyFrames
        for i in 0..<(Self.stateVectors * w.channels) { w.nextState[i] = SIMD16<Float>() }
        if let warmed = pendingWarmed {
            let since = remembered - warmed.through
            if since >= 0 && since <= IPodEQWorkspace.historyFrames {
                let from = w.warmedStates + warmed.slot * Self.stateVectors * w.channels
                for i in 0..<(Self.stateVectors * w.channels) { w.nextState[i] = from[i] }
                warmBehind = since
            }
            w.slots.release(slot: warmed.slot)
            pendingWarmed = nil
        }
        warming = true
        if warmPace == 0 || warmBehind == 0 { warm(frames: warmBehind) }
    }

    /// Runs the second bank over up to `frames` of the history it has not seen, oldest first; once level with the
    /// input, the crossfade to it begins.
    @_noLocks
    mutating func warm(frames: Int) {
        guard let w = workspace else { return }
        let capacity = IPodEQWorkspace.historyCapacity
        var left = min(frames, warmBehind)
        while left > 0 {
            // Frames before the first are the ring's initial zeros.
            let from = ((remembered - warmBehind) % capacity + capacity) % capacity
            let n = min(left, capacity - from)
            Self.run(
                &nextBank, state: w.nextState, input: w.history.samples + from, inputStride: capacity,
                output: w.scratch, outputStride: w.stride, channels: w.channels, frames: n)
            warmBehind -= n
            left -= n
        }
        guard warmBehind == 0 else { return }
        warming = false
        fade.current = 0
        fade.glide(to: 1, over: rampSamples)
        fading = true
    }

    /// Renders `frames` frames; with `levels`, adds the output's levels to them and returns whether they cover all of
    /// it (not while a crossfade or the bypass glide changes the output after the bank).
    @_noLocks @discardableResult
    public mutating func process(
        input: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>,
        channelStride: Int, channels: Int, frames: Int, levels: LevelMeter.RunLevels? = nil
    ) -> Bool {
        var measuring = levels != nil
        var done = 0
        while done < frames {
            var run = frames - done
            if let w = workspace { run = min(min(run, w.stride), IPodEQWorkspace.historyFrames) }
            // At the pace, and at least what keeps the frames about to be overwritten from being lost to the bank.
            if warming { warm(frames: max(warmPace * run, warmBehind + run - IPodEQWorkspace.historyCapacity)) }
            if fading { run = min(run, fade.remaining) }
            if fading || !(wet.isSteady && wet.current == 1) { measuring = false }
            if let w = workspace {
                w.history.remember(
                    input: input + done, channelStride: channelStride, channels: channels, frames: run,
                    remembered: &remembered)
                if warming { warmBehind += run }
                // The new bank first: processing may be in place, and the old bank overwrites the input.
                if fading {
                    Self.run(
                        &nextBank, state: w.nextState, input: input + done, inputStride: channelStride,
                        output: w.scratch, outputStride: w.stride, channels: channels, frames: run)
                }
            }
            Self.run(
                &currentBank, state: state, input: input + done, inputStride: channelStride,
                output: output + done, outputStride: channelStride, channels: channels, frames: run,
                levels: measuring ? levels : nil)
            if fading, let w = workspace {
                for f in 0..<run {
                    let g = fade.next()
                    for c in 0..<channels {
                        let at = c * channelStride + done + f
                        output[at] += g * (w.scratch[c * w.stride + f] - output[at])
                    }
                }
                if fade.isSteady { finishCrossfade() }
            }
            wet.blend(
                input: input + done, output: output + done, channelStride: channelStride, channels: channels,
                frames: run)
            done += run
        }
        restIfNotFinite(channels: channels)
        return measuring
    }

    /// A NaN or infinity in the input stays in the banks' state for good (the output guard would silence every slice
    /// after it): a bank whose state is not finite starts again from rest instead, so the next slice is heard.
    @_noLocks
    mutating func restIfNotFinite(channels: Int) {
        let count = Self.stateVectors * channels
        Self.restIfNotFinite(state, count: count)
        if let w = workspace { Self.restIfNotFinite(w.nextState, count: Self.stateVectors * min(channels, w.channels)) }
    }

    @_noLocks
    static func restIfNotFinite(_ state: UnsafeMutablePointer<SIMD16<Float>>, count: Int) {
        var sum = SIMD16<Float>()
        for i in 0..<count { sum += state[i] - state[i] }
        if sum.sum() != 0 { state.update(repeating: SIMD16(), count: count) }
    }

    /// The new bank becomes the current one; a change that waited starts now.
    @_noLocks
    mutating func finishCrossfade() {
        guard let w = workspace else { return }
        current = next
        currentBank = nextBank
        let channels = w.channels
        for i in 0..<(Self.stateVectors * channels) { state[i] = w.nextState[i] }
        fading = false
        if hasPending { startWarming() }
    }

    /// Every channel through one bank: pairs side by side, an odd last channel alone.
    @_noLocks @inline(__always)
    static func run(
        _ bank: UnsafeMutablePointer<FilterBank>, state: UnsafeMutablePointer<SIMD16<Float>>,
        input: UnsafeMutablePointer<Float>, inputStride: Int, output: UnsafeMutablePointer<Float>, outputStride: Int,
        channels: Int, frames: Int, levels: LevelMeter.RunLevels? = nil
    ) {
        let states = UnsafeMutableRawPointer(state).assumingMemoryBound(to: Float.self)
        let perChannel = FilterBank.stateFloats
        var c = 0
        while c + 1 < channels {
            let d = c + 1
            let second = (
                state: states + d * perChannel, input: UnsafePointer(input + d * inputStride),
                output: output + d * outputStride
            )
            FilterBank.run(
                bank, state: states + c * perChannel, input: input + c * inputStride,
                output: output + c * outputStride, second: second, frames: frames, levels: levels?.at(c))
            c += 2
        }
        if c < channels {
            FilterBank.run(
                bank, state: states + c * perChannel, input: input + c * inputStride,
                output: output + c * outputStride, second: nil, frames: frames, levels: levels?.at(c))
        }
    }
}

extension IPodEQKernel: RenderKernel {
    @_noLocks
    public mutating func render(_ step: RenderStep, _ slice: RenderSlice) {
        let levels = step.meter?.pointee.runLevels(channels: slice.channels)
        let measured = process(
            input: step.inputs[0], output: step.output!, channelStride: slice.channelStride, channels: slice.channels,
            frames: slice.frames, levels: levels)
        if measured { step.meter!.pointee.kernelMeasured() }
    }
}
