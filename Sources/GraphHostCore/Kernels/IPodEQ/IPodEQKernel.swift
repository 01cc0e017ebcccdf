/// The render side of the `ipod-eq` node: ten octave-band sections run side by side in SIMD lanes
/// (parallel form), so the cascade's recursion does not serialize the work.
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

    /// Two state vectors (s1, s2) per channel.
    public var state: UnsafeMutablePointer<SIMD16<Float>>
    public var current = ParallelEQCoefficients()
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
        hasPending = false
        warmBehind = IPodEQWorkspace.historyFrames
        for i in 0..<(2 * w.channels) { w.nextState[i] = SIMD16<Float>() }
        if let warmed = pendingWarmed {
            let since = remembered - warmed.through
            if since >= 0 && since <= IPodEQWorkspace.historyFrames {
                let from = w.warmedStates + warmed.slot * 2 * w.channels
                for i in 0..<(2 * w.channels) { w.nextState[i] = from[i] }
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
                next, state: w.nextState, input: w.history.samples + from, inputStride: capacity, output: w.scratch,
                outputStride: w.stride,
                channels: w.channels, frames: n)
            warmBehind -= n
            left -= n
        }
        guard warmBehind == 0 else { return }
        warming = false
        fade.current = 0
        fade.glide(to: 1, over: rampSamples)
        fading = true
    }

    @_noLocks
    public mutating func process(
        input: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>,
        channelStride: Int, channels: Int, frames: Int
    ) {
        var done = 0
        while done < frames {
            var run = frames - done
            if let w = workspace { run = min(min(run, w.stride), IPodEQWorkspace.historyFrames) }
            // At the pace, and at least what keeps the frames about to be overwritten from being lost to the bank.
            if warming { warm(frames: max(warmPace * run, warmBehind + run - IPodEQWorkspace.historyCapacity)) }
            if fading { run = min(run, fade.remaining) }
            if let w = workspace {
                w.history.remember(
                    input: input + done, channelStride: channelStride, channels: channels, frames: run,
                    remembered: &remembered)
                if warming { warmBehind += run }
                // The new bank first: processing may be in place, and the old bank overwrites the input.
                if fading {
                    Self.run(
                        next, state: w.nextState, input: input + done, inputStride: channelStride,
                        output: w.scratch, outputStride: w.stride, channels: channels, frames: run)
                }
            }
            Self.run(
                current, state: state, input: input + done, inputStride: channelStride,
                output: output + done, outputStride: channelStride, channels: channels, frames: run)
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
    }

    /// The new bank becomes the current one; a change that waited starts now.
    @_noLocks
    mutating func finishCrossfade() {
        guard let w = workspace else { return }
        current = next
        let channels = w.channels
        for i in 0..<(2 * channels) { state[i] = w.nextState[i] }
        fading = false
        if hasPending { startWarming() }
    }

    /// Every channel through one bank: pairs side by side, an odd last channel alone.
    @_noLocks @inline(__always)
    static func run(
        _ k: ParallelEQCoefficients, state: UnsafeMutablePointer<SIMD16<Float>>, input: UnsafeMutablePointer<Float>,
        inputStride: Int, output: UnsafeMutablePointer<Float>, outputStride: Int, channels: Int, frames: Int
    ) {
        var c = 0
        while c + 1 < channels {
            filterPair(
                k, state: state + 2 * c, input: (input + c * inputStride, input + (c + 1) * inputStride),
                output: (output + c * outputStride, output + (c + 1) * outputStride), frames: frames)
            c += 2
        }
        if c < channels {
            filter(
                k, state: state + 2 * c, input: input + c * inputStride, output: output + c * outputStride,
                frames: frames)
        }
    }

    /// One channel: all sections side by side in one 16-lane vector.
    @_noLocks @inline(__always)
    static func filter(
        _ k: ParallelEQCoefficients, state: UnsafeMutablePointer<SIMD16<Float>>,
        input: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>, frames: Int
    ) {
        var s1 = state[0]
        var s2 = state[1]
        let c0 = k.c0
        let c1 = k.c1
        let a1 = k.a1
        let na2 = -k.a2
        let d = k.d
        for i in 0..<frames {
            let x = input[i]
            let xv = SIMD16<Float>(repeating: x)
            let t = c1 * xv + s2
            let y = c0 * xv + s1
            s1 = t - a1 * y
            s2 = na2 * y
            output[i] = d * x + y.sum()
        }
        state[0] = s1
        state[1] = s2
    }

    /// Ten sections of two channels in five 4-lane vectors, no lane wasted:
    /// [A0–3] [A4–7] [A8 A9 B8 B9] [B0–3] [B4–7]. Both channels' recursions run interleaved.
    @_noLocks @inline(__always)
    static func filterPair(
        _ k: ParallelEQCoefficients, state: UnsafeMutablePointer<SIMD16<Float>>,
        input: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>),
        output: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>), frames: Int
    ) {
        typealias V = SIMD4<Float>
        let c0 = (Lanes.low(k.c0), Lanes.mid(k.c0), Lanes.tail(k.c0, k.c0))
        let c1 = (Lanes.low(k.c1), Lanes.mid(k.c1), Lanes.tail(k.c1, k.c1))
        let a1 = (Lanes.low(k.a1), Lanes.mid(k.a1), Lanes.tail(k.a1, k.a1))
        let na2 = (-Lanes.low(k.a2), -Lanes.mid(k.a2), -Lanes.tail(k.a2, k.a2))
        let d = k.d
        let sa1 = state[0]
        let sa2 = state[1]
        let sb1 = state[2]
        let sb2 = state[3]
        var s1 = (Lanes.low(sa1), Lanes.mid(sa1), Lanes.tail(sa1, sb1), Lanes.low(sb1), Lanes.mid(sb1))
        var s2 = (Lanes.low(sa2), Lanes.mid(sa2), Lanes.tail(sa2, sb2), Lanes.low(sb2), Lanes.mid(sb2))
        for i in 0..<frames {
            let xa = input.0[i]
            let xb = input.1[i]
            let va = V(repeating: xa)
            let vb = V(repeating: xb)
            let vm = V(xa, xa, xb, xb)
            let t0 = c1.0 * va + s2.0
            let t1 = c1.1 * va + s2.1
            let t2 = c1.2 * vm + s2.2
            let t3 = c1.0 * vb + s2.3
            let t4 = c1.1 * vb + s2.4
            let y0 = c0.0 * va + s1.0
            let y1 = c0.1 * va + s1.1
            let y2 = c0.2 * vm + s1.2
            let y3 = c0.0 * vb + s1.3
            let y4 = c0.1 * vb + s1.4
            s1 = (t0 - a1.0 * y0, t1 - a1.1 * y1, t2 - a1.2 * y2, t3 - a1.0 * y3, t4 - a1.1 * y4)
            s2 = (na2.0 * y0, na2.1 * y1, na2.2 * y2, na2.0 * y3, na2.1 * y4)
            let sa = y0 + y1
            let sb = y3 + y4
            output.0[i] = d * xa + ((sa.lowHalf + sa.highHalf) + y2.lowHalf).sum()
            output.1[i] = d * xb + ((sb.lowHalf + sb.highHalf) + y2.highHalf).sum()
        }
        state[0] = Lanes.store(s1.0, s1.1, s1.2.lowHalf)
        state[1] = Lanes.store(s2.0, s2.1, s2.2.lowHalf)
        state[2] = Lanes.store(s1.3, s1.4, s1.2.highHalf)
        state[3] = Lanes.store(s2.3, s2.4, s2.2.highHalf)
    }
}

/// Lane shuffles between the 16-lane per-channel layout and the paired 4-lane layout.
enum Lanes {
    @_noLocks @inline(__always)
    static func low(_ v: SIMD16<Float>) -> SIMD4<Float> { v.lowHalf.lowHalf }

    @_noLocks @inline(__always)
    static func mid(_ v: SIMD16<Float>) -> SIMD4<Float> { v.lowHalf.highHalf }

    /// Lanes 8 and 9 of `a` followed by lanes 8 and 9 of `b`.
    @_noLocks @inline(__always)
    static func tail(_ a: SIMD16<Float>, _ b: SIMD16<Float>) -> SIMD4<Float> {
        SIMD4(lowHalf: a.highHalf.lowHalf.lowHalf, highHalf: b.highHalf.lowHalf.lowHalf)
    }

    @_noLocks @inline(__always)
    static func store(_ p0: SIMD4<Float>, _ p1: SIMD4<Float>, _ tail: SIMD2<Float>) -> SIMD16<Float> {
        SIMD16(
            lowHalf: SIMD8(lowHalf: p0, highHalf: p1),
            highHalf: SIMD8(lowHalf: SIMD4(lowHalf: tail, highHalf: .zero), highHalf: .zero))
    }
}

extension IPodEQKernel: RenderKernel {
    @_noLocks
    public mutating func render(_ step: RenderStep, _ slice: RenderSlice) {
        process(
            input: step.inputs[0], output: step.output!, channelStride: slice.channelStride, channels: slice.channels,
            frames: slice.frames)
    }
}
