import Atomics

/// The render world's entry point for one running graph: applies control messages, renders the current
/// plan (or a transition to the next one) in slices, and applies the pause/play fade. Finished transitions
/// are counted in `completedTransitions`, after which the control world frees what they retired.
public struct RenderEngine {
    public private(set) var plan: RenderPlan
    var transition: UnsafeMutablePointer<PlanTransition>?
    var transport: Transport
    public let messages: ControlQueue
    public let completedTransitions: UnsafeAtomic<Int>
    /// Monotonic time (ns) of the render call that applied the most recent message, and how many were applied.
    public let appliedNanos: UnsafeAtomic<Int>
    public let appliedMessages: UnsafeAtomic<Int>
    /// The slowest step of the latest render call, and every step's and call's time (`StepTiming.load`).
    public let timing: UnsafeMutablePointer<StepTiming>
    /// Slices whose output held NaN, Inf or a burst above +24 dBFS (replaced by silence); after one, plugin outputs are
    /// checked for a while so the node can be found and silenced.
    public let silencedSlices: UnsafeAtomic<Int>
    /// The musical transport plugins are told about (time:Position).
    public let musicalTime: UnsafeMutablePointer<MusicalTime>
    /// Worker threads that share the steps of heavy slices (nil: every step renders on the calling thread). Set
    /// before the engine first renders.
    public var workers: RenderWorkers?
    var checkFramesLeft = 0
    static var checkFrames: Int { 1 << 18 }

    public init(plan: RenderPlan, transportFadeFrames: Int, sampleRate: Double) {
        self.plan = plan
        transport = Transport(fadeFrames: transportFadeFrames)
        messages = .allocate()
        completedTransitions = .create(0)
        appliedNanos = .create(0)
        appliedMessages = .create(0)
        timing = .allocateRender(capacity: 1)
        timing.initialize(to: StepTiming())
        silencedSlices = .create(0)
        musicalTime = .allocateRender(capacity: 1)
        musicalTime.initialize(to: MusicalTime(sampleRate: sampleRate))
    }

    public func deallocate() {
        messages.deallocate()
        completedTransitions.destroy()
        appliedNanos.destroy()
        appliedMessages.destroy()
        timing.pointee.deallocate()
        timing.deallocateRender()
        silencedSlices.destroy()
        musicalTime.deallocateRender()
    }

    /// Paused, faded out and with no transition under way: rendering is silence until a message comes.
    public var isResting: Bool {
        @_noLocks get { transport.isSilent && transition == nil }
    }

    /// Where a render call writes: one interleaved buffer, or one buffer per channel.
    public enum Destination {
        case interleaved(UnsafeMutablePointer<Float>)
        case planar(UnsafePointer<UnsafeMutablePointer<Float>>)
    }

    /// Renders `frames` interleaved frames of any count.
    @_noLocks
    public mutating func render(frames: Int, interleaved destination: UnsafeMutablePointer<Float>) {
        render(frames: frames, into: .interleaved(destination))
    }

    /// Renders `frames` frames into planar channels (`destination[c]`).
    @_noLocks
    public mutating func render(frames: Int, planar destination: UnsafePointer<UnsafeMutablePointer<Float>>) {
        render(frames: frames, into: .planar(destination))
    }

    /// Applies pending messages, then renders the first output in slices of at most `maxFrames`.
    @_noLocks
    public mutating func render(frames: Int, into destination: Destination) {
        let started = MonotonicClock.nanos()
        timing.pointee.reset()
        deliverMessages()
        var done = 0
        while done < frames {
            let slice = nextSlice(frames - done)
            let sliceStarted = MonotonicClock.nanos()
            let steps = timing.pointee.stepNanos
            let active = runSlice(frames: slice)
            copy(active.outputBuses[0], frames: slice, to: destination, at: done)
            timing.pointee.noteOutputs(sliceStarted: sliceStarted, steps: steps)
            done += slice
            advance(slice)
            musicalTime.pointee.advance(slice)
        }
        timing.pointee.finishCall(started: started, frames: frames)
    }

    /// Renders every output: output k into the planar channels `outputs[k]`, for k below `count` and the plan's
    /// output count (a graph with several output nodes, played through one stream each).
    @_noLocks
    public mutating func render(
        frames: Int, planarOutputs outputs: UnsafePointer<UnsafePointer<UnsafeMutablePointer<Float>>>, count: Int
    ) {
        let started = MonotonicClock.nanos()
        timing.pointee.reset()
        deliverMessages()
        var done = 0
        while done < frames {
            let slice = nextSlice(frames - done)
            let sliceStarted = MonotonicClock.nanos()
            let steps = timing.pointee.stepNanos
            let active = runSlice(frames: slice)
            let n = count < active.outputCount ? count : active.outputCount
            for k in 0..<n { copy(active.outputBuses[k], frames: slice, to: .planar(outputs[k]), at: done) }
            timing.pointee.noteOutputs(sliceStarted: sliceStarted, steps: steps)
            done += slice
            advance(slice)
            musicalTime.pointee.advance(slice)
        }
        timing.pointee.finishCall(started: started, frames: frames)
    }

    @_noLocks
    func copy(_ bus: UnsafeMutablePointer<Float>, frames: Int, to destination: Destination, at done: Int) {
        let channels = plan.channels
        let stride = plan.maxFrames
        switch destination {
        case .interleaved(let out):
            Interleaving.interleave(
                from: bus, channelStride: stride, channels: channels, frames: frames, into: out + done * channels)
        case .planar(let out):
            for c in 0..<channels {
                let from = bus + c * stride
                let to = out[c] + done
                for f in 0..<frames { to[f] = from[f] }
            }
        }
    }

    /// The next slice: at most `maxFrames`, ending where a pause fade or a transition ends.
    @_noLocks
    func nextSlice(_ left: Int) -> Int {
        var slice = transport.limit(min(plan.maxFrames, left))
        if let t = transition { slice = min(slice, t.pointee.clock.pointee.remaining) }
        return slice
    }

    @_noLocks
    mutating func deliverMessages() {
        var applied = false
        while let message = messages.peek() {
            switch message {
            case .kernel(let change): change.apply()
            case .transport(let change):
                transport.apply(change)
                switch change {
                case .play: musicalTime.pointee.apply(.playing(true))
                case .pause: musicalTime.pointee.apply(.playing(false))
                }
            case .musicalTime(let change):
                musicalTime.pointee.apply(change)
            case .transition(let t):
                // One transition at a time: a later one (and what follows it) waits for the current fade to end; a
                // ringing spillover tail starts fading out at once.
                if let current = transition {
                    let clock = current.pointee.clock
                    if clock.pointee.spills && clock.pointee.position < clock.pointee.limit {
                        clock.pointee.limit = clock.pointee.position
                    }
                    return noteApplied(applied)
                }
                transition = t
                if transport.isSilent { finishTransition() }
            }
            messages.dropFirst()
            applied = true
        }
        noteApplied(applied)
    }

    @_noLocks
    func noteApplied(_ applied: Bool) {
        guard applied else { return }
        appliedNanos.store(MonotonicClock.nanos(), ordering: .relaxed)
        appliedMessages.wrappingIncrement(ordering: .releasing)
        messages.room.roomFreed(in: messages.index)
    }

    /// Runs one slice of the current plan or transition through the output guard and the transport fade; returns the
    /// plan whose output buses hold it.
    @_noLocks
    mutating func runSlice(frames: Int) -> RenderPlan {
        let active = transition?.pointee.plan ?? plan
        let stride = active.maxFrames
        let channels = active.channels
        if transport.isSilent {
            for k in 0..<active.outputCount {
                Bus.clear(active.outputBuses[k], channelStride: stride, channels: channels, from: 0, to: frames)
            }
            active.measureOutputs(frames: frames)
            return active
        }
        active.runSlice(
            frames: frames, timing: timing, guardOutput: checkFramesLeft > 0, time: UnsafePointer(musicalTime),
            workers: workers)
        checkFramesLeft = checkFramesLeft > frames ? checkFramesLeft - frames : 0
        for k in 0..<active.outputCount
        where !Self.guardOutput(
            active.outputBuses[k], channelStride: stride, channels: channels, frames: frames,
            meter: active.outputMeters?[k], measures: transport.isUnity)
        {
            Bus.clear(active.outputBuses[k], channelStride: stride, channels: channels, from: 0, to: frames)
            silencedSlices.wrappingIncrement(ordering: .relaxed)
            checkFramesLeft = Self.checkFrames
        }
        if !transport.isUnity {
            for f in 0..<frames {
                let g = transport.gain.next()
                for k in 0..<active.outputCount {
                    let bus = active.outputBuses[k]
                    for c in 0..<channels { bus[c * stride + f] *= g }
                }
            }
        }
        active.measureOutputs(frames: frames)
        return active
    }

    /// Whether an output bus is safe to hear (`Bus.isSafe`), judged from one measuring pass: every channel's sum of
    /// squares finite and its peak within `Bus.safePeak`. The pass leaves its levels in the output's meter, which
    /// takes them when it is on and no fade follows (`measures`); a bus the guard silences reads as silence.
    @_noLocks
    static func guardOutput(
        _ bus: UnsafeMutablePointer<Float>, channelStride: Int, channels: Int, frames: Int,
        meter: UnsafeMutablePointer<LevelMeter>?, measures: Bool
    ) -> Bool {
        guard let meter, meter.pointee.channels == channels else {
            return Bus.isSafe(bus, channelStride: channelStride, channels: channels, frames: frames)
        }
        let levels = LevelMeter.RunLevels(squares: meter.pointee.runSquares, peaks: meter.pointee.runPeaks)
        SampleRunLevels.measure(
            bus, channelStride: channelStride, channels: channels, count: frames, squares: levels.squares,
            peaks: levels.peaks)
        var safe = true
        for c in 0..<channels where !Bus.isSafe(squares: levels.squares[c], peak: levels.peaks[c]) { safe = false }
        if measures && meter.pointee.isOn.load(ordering: .relaxed) {
            if !safe {
                levels.squares.update(repeating: 0, count: channels)
                levels.peaks.update(repeating: 0, count: channels)
            }
            meter.pointee.kernelMeasured()
        }
        return safe
    }

    /// Moves a running transition on by `frames`, finishing it at the end of its fade.
    @_noLocks
    mutating func advance(_ frames: Int) {
        guard let t = transition, !transport.isSilent else {
            if transition != nil { finishTransition() }
            return
        }
        t.pointee.clock.pointee.position += frames
        t.pointee.clock.pointee.noteSlice()
        if t.pointee.clock.pointee.remaining <= 0 { finishTransition() }
    }

    @_noLocks
    mutating func finishTransition() {
        guard let t = transition else { return }
        plan = t.pointee.next
        transition = nil
        completedTransitions.wrappingIncrement(ordering: .releasing)
    }
}
