/// One second-order section of the `peq` kernel: normalized coefficients (a0 = 1) in double precision, run in
/// transposed direct form II, and the frames a section started from rest takes to reach its steady output.
public struct PEQSection: Equatable {
    public var b0: Double, b1: Double, b2: Double, a1: Double, a2: Double
    public var settleFrames: Int

    public init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double, settleFrames: Int) {
        self.b0 = b0
        self.b1 = b1
        self.b2 = b2
        self.a1 = a1
        self.a2 = a2
        self.settleFrames = settleFrames
    }
}

/// The render side of the `peq` node: a cascade of up to 16 biquad sections per channel, in double precision, then a
/// preamp gain. A changed bank is heard at once: the control world runs it over the recent input until it has settled
/// (`PEQWorkspace.warm`) and sends it warmed; the callback that takes it runs it over the frames that came since, and
/// the output crossfades linearly from the old bank to it over `rampFrames`; at every instant it is a convex mix of two
/// steady filters. A bank that comes unwarmed (`band` changes) starts from rest beside the playing one and is heard
/// once it has settled on the input (the longest `settleFrames` of its sections, at most `maxSettleFrames`); a warmed
/// bank takes the place of one still warming. Other changes that come meanwhile wait and start together when the
/// crossfade ends (only the latest value of each band counts). Preamp and bypass glide over `rampFrames`.
public struct PEQKernel {
    /// Length of the crossfade to a changed bank, in seconds.
    public static let rampSeconds = 0.030
    /// The longest a changed bank warms before it is heard (1.4 s at 48 kHz).
    public static var maxSettleFrames: Int { @_noLocks get { 1 << 16 } }
    /// The most frames a callback runs a warmed bank over to catch up with the input (170 ms at 48 kHz); a bank
    /// warmed longer ago warms again on the live input.
    static let maxCatchUpFrames = 8192

    public enum Change {
        /// Band `index` gets a new section.
        case band(Int, PEQSection)
        /// The whole bank in the workspace's warmed slot `slot`, which the control world ran over the input up to
        /// frame `through`.
        case warmed(slot: Int, through: Int)
        /// The preamp's linear gain.
        case preamp(Float)
        case bypass(Bool)
    }

    enum Phase {
        case steady
        /// The next bank runs unheard for `left` more frames.
        case warming(left: Int)
        /// The output has crossfaded `done` of `rampFrames` frames to the next bank.
        case fading(done: Int)
    }

    public let bandCount: Int
    public let channels: Int
    /// Three banks of `bandCount` sections: the current one, the next (warming or fading in), and the pending changes.
    let sections: UnsafeMutablePointer<PEQSection>
    /// (s1, s2) of every band of every channel: the current bank's, then the next's.
    let state: UnsafeMutablePointer<SIMD2<Double>>
    let rampFrames: Int
    let workspace: PEQWorkspace
    var phase = Phase.steady
    var hasPending = false
    /// The warmed slot and frame of the pending bank, when the control world warmed it.
    var pendingWarmed: (slot: Int, through: Int)?
    /// Input frames put in the history ring so far.
    var remembered = 0
    var preamp: SmoothedGain
    /// How much of the filtered signal is heard; bypass glides it to 0 (the filters keep running).
    var wet = SmoothedGain(1)

    /// The memory a kernel of `bandCount` bands on `channels` channels runs on: `sectionCount` sections and
    /// `stateCount` states, owned by the control world.
    public static func sectionCount(bands: Int) -> Int { max(1, 3 * bands) }
    public static func stateCount(bands: Int, channels: Int) -> Int { max(1, 2 * bands * channels) }

    /// Starts on `bank` (`bandCount` sections), every state at rest. `sections` and `state` hold `sectionCount` and
    /// `stateCount` elements; `workspace` has `channels` channels and room for `bandCount` bands.
    public init(
        bank: [PEQSection], channels: Int, preamp: Float, rampFrames: Int, sections: UnsafeMutablePointer<PEQSection>,
        state: UnsafeMutablePointer<SIMD2<Double>>, workspace: PEQWorkspace
    ) {
        bandCount = bank.count
        self.channels = channels
        self.sections = sections
        self.state = state
        self.rampFrames = rampFrames
        self.workspace = workspace
        self.preamp = SmoothedGain(preamp)
        for copy in 0..<3 { for (b, s) in bank.enumerated() { (sections + copy * bandCount + b).initialize(to: s) } }
        state.initialize(repeating: SIMD2(), count: Self.stateCount(bands: bandCount, channels: channels))
    }

    var current: UnsafeMutablePointer<PEQSection> { sections }
    var next: UnsafeMutablePointer<PEQSection> { sections + bandCount }
    var pending: UnsafeMutablePointer<PEQSection> { sections + 2 * bandCount }

    @_noLocks
    public mutating func apply(_ change: Change) {
        switch change {
        case .band(let index, let section):
            guard index >= 0 && index < bandCount else { return }
            pending[index] = section
            hasPending = true
            // The pending bank is no longer the one warmed.
            releasePendingWarmed()
        case .warmed(let slot, let through):
            let bank = workspace.warmedSections + slot * workspace.bandCount
            for b in 0..<bandCount { pending[b] = bank[b] }
            releasePendingWarmed()
            pendingWarmed = (slot, through)
            hasPending = true
        case .preamp(let gain):
            preamp.glide(to: gain, over: rampFrames)
        case .bypass(let on):
            wet.glide(to: on ? 0 : 1, over: rampFrames)
        }
    }

    @_noLocks
    public mutating func process(
        input: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>,
        channelStride: Int, channels: Int, frames: Int
    ) {
        let channels = min(channels, self.channels)
        var done = 0
        while done < frames {
            if hasPending {
                switch phase {
                case .steady: startNext()
                // The bank warming is not heard yet: a warmed one takes its place at once.
                case .warming where pendingWarmed != nil: startNext()
                default: break
                }
            }
            var run = min(frames - done, PEQWorkspace.historyFrames)
            switch phase {
            case .steady: break
            case .warming(let left): run = min(run, left)
            case .fading(let faded): run = min(run, rampFrames - faded)
            }
            workspace.history.remember(
                input: input + done, channelStride: channelStride, channels: channels, frames: run,
                remembered: &remembered)
            filter(
                input: input + done, output: output + done, channelStride: channelStride, channels: channels,
                frames: run)
            advance(run)
            done += run
        }
        preamp.scale(output, channelStride: channelStride, channels: channels, frames: frames)
        wet.blend(input: input, output: output, channelStride: channelStride, channels: channels, frames: frames)
        restIfNotFinite()
    }

    /// A NaN or infinity in the input stays in a recursive filter's state for good (the output guard would silence
    /// every slice after it): the banks start again from rest instead, so the next slice is heard.
    @_noLocks
    mutating func restIfNotFinite() {
        let count = Self.stateCount(bands: bandCount, channels: channels)
        var sum = SIMD2<Double>()
        for i in 0..<count { sum += state[i] - state[i] }
        if sum.sum() != 0 { state.update(repeating: SIMD2(), count: count) }
    }

    /// The pending bank becomes the next one: from the state the control world warmed, caught up on the frames that
    /// came since, when the ring still holds them and they are few; else from rest.
    @_noLocks
    mutating func startNext() {
        var settle = 0
        for b in 0..<bandCount {
            next[b] = pending[b]
            settle = max(settle, min(pending[b].settleFrames, Self.maxSettleFrames))
        }
        let then = state + bandCount * channels
        for i in 0..<(bandCount * channels) { then[i] = SIMD2() }
        hasPending = false
        if let warmed = pendingWarmed {
            let since = remembered - warmed.through
            let w = workspace
            if since >= 0 && since <= Self.maxCatchUpFrames {
                let warm = w.warmedStates + warmed.slot * w.bandCount * channels
                for c in 0..<channels {
                    for b in 0..<bandCount { then[c * bandCount + b] = warm[c * w.bandCount + b] }
                    Self.run(
                        next, state: then + c * bandCount, count: bandCount,
                        ring: w.history.samples + c * PEQWorkspace.historyCapacity,
                        from: warmed.through, to: remembered)
                }
                settle = 0
            }
            releasePendingWarmed()
        }
        phase = settle > 0 ? .warming(left: settle) : .fading(done: 0)
        if rampFrames == 0 && settle == 0 { finish() }
    }

    @_noLocks
    mutating func releasePendingWarmed() {
        if let held = pendingWarmed { workspace.slots.release(slot: held.slot) }
        pendingWarmed = nil
    }

    @_noLocks
    mutating func advance(_ frames: Int) {
        switch phase {
        case .steady:
            break
        case .warming(let left):
            phase = left > frames ? .warming(left: left - frames) : (rampFrames > 0 ? .fading(done: 0) : .steady)
            if case .steady = phase { finish() }
        case .fading(let faded):
            if faded + frames < rampFrames { phase = .fading(done: faded + frames) } else { finish() }
        }
    }

    /// The next bank, with its state, becomes the current one.
    @_noLocks
    mutating func finish() {
        for b in 0..<bandCount { current[b] = next[b] }
        for i in 0..<(bandCount * channels) { state[i] = state[bandCount * channels + i] }
        phase = .steady
    }

    @_noLocks
    func filter(
        input: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>, channelStride: Int, channels: Int,
        frames: Int
    ) {
        let n = bandCount
        for c in 0..<channels {
            let x = input + c * channelStride
            let y = output + c * channelStride
            let now = state + c * n
            let then = state + (self.channels + c) * n
            switch phase {
            case .steady:
                for f in 0..<frames { y[f] = Float(Self.cascade(current, now, n, Double(x[f]))) }
            case .warming:
                for f in 0..<frames {
                    let v = Double(x[f])
                    _ = Self.cascade(next, then, n, v)
                    y[f] = Float(Self.cascade(current, now, n, v))
                }
            case .fading(let faded):
                let step = 1 / Double(rampFrames)
                for f in 0..<frames {
                    let v = Double(x[f])
                    let new = Self.cascade(next, then, n, v)
                    let old = Self.cascade(current, now, n, v)
                    y[f] = Float(old + Double(faded + f + 1) * step * (new - old))
                }
            }
        }
    }

    /// `count` sections in series over frames `from..<to` of one channel's history ring, unheard; frames before the
    /// first are the ring's initial zeros.
    @_noLocks
    public static func run(
        _ k: UnsafeMutablePointer<PEQSection>, state: UnsafeMutablePointer<SIMD2<Double>>, count: Int,
        ring: UnsafeMutablePointer<Float>, from: Int, to: Int
    ) {
        let capacity = PEQWorkspace.historyCapacity
        var at = from
        while at < to {
            let i = (at % capacity + capacity) % capacity
            let n = min(to - at, capacity - i)
            for f in 0..<n { _ = cascade(k, state, count, Double(ring[i + f])) }
            at += n
        }
    }

    /// One sample through `count` sections in series.
    @_noLocks @inline(__always)
    static func cascade(
        _ k: UnsafeMutablePointer<PEQSection>, _ s: UnsafeMutablePointer<SIMD2<Double>>, _ count: Int, _ x: Double
    ) -> Double {
        var v = x
        for b in 0..<count {
            let c = k[b]
            let z = s[b]
            let y = c.b0 * v + z.x
            s[b] = SIMD2(c.b1 * v - c.a1 * y + z.y, c.b2 * v - c.a2 * y)
            v = y
        }
        return v
    }
}

extension PEQKernel: RenderKernel {
    @_noLocks
    public mutating func render(_ step: RenderStep, _ slice: RenderSlice) {
        process(
            input: step.inputs[0], output: step.output!, channelStride: slice.channelStride, channels: slice.channels,
            frames: slice.frames)
    }
}
