/// An immutable, fully prepared render schedule: steps in topological order over preallocated
/// planar buses. Everything it touches is plain memory owned by the control world (`CompiledPlan`).
public struct RenderPlan {
    public let steps: UnsafeMutableBufferPointer<RenderStep>
    public let channels: Int
    /// Frames per bus channel; the largest slice one step processes.
    public let maxFrames: Int
    /// The buses that hold the plan's outputs after a slice, one per output node in the graph's order (a silent bus
    /// for an output nothing feeds).
    public let outputBuses: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    public let outputCount: Int
    /// One meter per output (measured after the output guard and the transport fade), or nil: none.
    public let outputMeters: UnsafeMutablePointer<UnsafeMutablePointer<LevelMeter>>?
    /// One analysis tap per output, captured where the output meters measure, or nil: none.
    public let outputTaps: UnsafeMutablePointer<UnsafeMutablePointer<AnalysisTap>>?
    /// The steps as a dependency graph when some of them can render at once (nil: one after another).
    public let schedule: StepSchedule?
    /// The first output's bus.
    public var outputBus: UnsafeMutablePointer<Float> { outputBuses[0] }

    public init(
        steps: UnsafeMutableBufferPointer<RenderStep>, channels: Int, maxFrames: Int,
        outputBuses: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, outputCount: Int,
        outputMeters: UnsafeMutablePointer<UnsafeMutablePointer<LevelMeter>>? = nil,
        outputTaps: UnsafeMutablePointer<UnsafeMutablePointer<AnalysisTap>>? = nil, schedule: StepSchedule? = nil
    ) {
        self.steps = steps
        self.channels = channels
        self.maxFrames = maxFrames
        self.outputBuses = outputBuses
        self.outputCount = outputCount
        self.outputMeters = outputMeters
        self.outputTaps = outputTaps
        self.schedule = schedule
    }

    /// Runs every step once over `frames` ≤ `maxFrames` frames, noting the slowest step in `timing` (a step's time
    /// includes its node's meter and tap).
    /// `guardOutput` makes plugin steps silence output holding NaN, Inf or a burst above +24 dBFS; `time` is the
    /// musical transport plugins are told about. With `workers`, a plan that has a schedule renders its steps on
    /// several threads when the slice is worth sharing; the samples are the same either way.
    @_noLocks
    public func runSlice(
        frames: Int, timing: UnsafeMutablePointer<StepTiming>, guardOutput: Bool = false,
        time: UnsafePointer<MusicalTime>? = nil, workers: RenderWorkers? = nil
    ) {
        let slice = RenderSlice(
            frames: frames, channels: channels, channelStride: maxFrames, guardOutput: guardOutput, time: time)
        let before = timing.pointee.stepNanos
        if let schedule, let workers, let base = steps.baseAddress, workers.shares() {
            let started = MonotonicClock.nanos()
            workers.render(base, schedule, slice)
            let wall = MonotonicClock.nanos() - started
            for i in 0..<steps.count { timing.pointee.note(schedule.nanos[i], steps[i].kernel) }
            let sum = timing.pointee.stepNanos - before
            // The steps overlapped: what the slice spent on them is their wall time, so the outputs' share (the
            // slice's time less its steps') stays what it is on one thread.
            timing.pointee.stepNanos = before + wall
            workers.noteSlice(stepNanos: sum)
        } else {
            for step in steps { timing.pointee.note(step.run(slice), step.kernel) }
            workers?.noteSlice(stepNanos: timing.pointee.stepNanos - before)
        }
    }

    /// Measures the output buses' first `frames` frames with the output meters and captures them with the taps.
    @_noLocks
    public func measureOutputs(frames: Int) {
        if let meters = outputMeters {
            for k in 0..<outputCount {
                meters[k].pointee.measure(outputBuses[k], channelStride: maxFrames, frames: frames)
            }
        }
        if let taps = outputTaps {
            for k in 0..<outputCount {
                taps[k].pointee.capture(outputBuses[k], channelStride: maxFrames, frames: frames)
            }
        }
    }
}
