import Atomics
import CPipeWireGlue
import CThreadGlue
import Glibc

/// Counters the process callback publishes to the control world.
public struct PlaybackCounters: Sendable {
    public let callbacks: UnsafeAtomic<Int>
    public let frames: UnsafeAtomic<Int>
    /// Cycles the daemon ran without us (a jump in the clock position).
    public let xruns: UnsafeAtomic<Int>
    /// Callbacks that found no free buffer to fill.
    public let missedBuffers: UnsafeAtomic<Int>
    /// The longest callback so far, in nanoseconds.
    public let maxBusyNanos: UnsafeAtomic<Int>
    /// Nanoseconds spent in the last callback and that callback's budget (its frames at the rate).
    public let busyNanos: UnsafeAtomic<Int>
    public let budgetNanos: UnsafeAtomic<Int>
    /// Callbacks that took longer than their quantum (each also counted as an xrun), and the slowest node of the
    /// latest one (kernel address) with its time.
    public let overruns: UnsafeAtomic<Int>
    public let slowKernel: UnsafeAtomic<Int>
    public let slowNanos: UnsafeAtomic<Int>
    /// The most frames one callback was asked for.
    public let largestQuantum: UnsafeAtomic<Int>
    public let quantum: UnsafeAtomic<Int>
    /// CLOCK_MONOTONIC when the first callback handed PipeWire a sample above −80 dBFS (0 until then).
    public let firstSoundNanos: UnsafeAtomic<Int>
    /// When the latest callback left the graph at rest (paused, faded out, no transition under way): the control
    /// messages it had taken by then, so the control world can tell that none came after; else -1.
    public let restingThrough: UnsafeAtomic<Int>
    /// Frames handed to PipeWire since the output last held a sample above −120 dBFS.
    public let quietFrames: UnsafeAtomic<Int>

    public static func create() -> PlaybackCounters {
        PlaybackCounters(
            callbacks: .create(0), frames: .create(0), xruns: .create(0), missedBuffers: .create(0),
            maxBusyNanos: .create(0), busyNanos: .create(0),
            budgetNanos: .create(0), overruns: .create(0), slowKernel: .create(0), slowNanos: .create(0),
            largestQuantum: .create(0), quantum: .create(0), firstSoundNanos: .create(0), restingThrough: .create(-1),
            quietFrames: .create(0))
    }

    public func destroy() {
        callbacks.destroy()
        frames.destroy()
        xruns.destroy()
        missedBuffers.destroy()
        maxBusyNanos.destroy()
        busyNanos.destroy()
        budgetNanos.destroy()
        overruns.destroy()
        slowKernel.destroy()
        slowNanos.destroy()
        largestQuantum.destroy()
        quantum.destroy()
        firstSoundNanos.destroy()
        restingThrough.destroy()
        quietFrames.destroy()
    }
}

/// Everything PipeWire's process callback touches, prepared by the control world (`PipeWirePlayer`).
/// The callback dequeues a buffer, renders the plan straight into it (planar or interleaved float),
/// applies the stop fade, and queues it back.
public struct PlaybackRenderer {
    public var stream: OpaquePointer?
    /// The control-world object that owns this renderer, for the non-real-time stream events.
    public var owner: UnsafeMutableRawPointer?
    public let engine: UnsafeMutablePointer<RenderEngine>
    public let channels: Int
    public let sampleRate: Int
    /// Set from param_changed (PipeWire's loop thread) while the data thread may be rendering.
    public let planarFormat: UnsafeAtomic<Bool>
    /// One pointer per channel, filled per callback for planar buffers.
    public let channelPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    public let silence: UnsafeMutablePointer<Float>
    public let counters: PlaybackCounters
    /// The stream's spa_io_position, set from io_changed.
    public let position: UnsafeAtomic<UnsafeMutableRawPointer?>
    /// Where the callback tells live inputs which cycle it renders (`LiveInputAlignment`).
    let outputCycle = LiveInputRings.outputCycle
    var lastClockPosition: UInt64 = 0
    var lastClockDuration: UInt64 = 0
    var skipClockCheck = false
    /// Set by the control world when it wakes an idle stream: the clock's jump over the idle time is no xrun.
    public let resumed: UnsafeAtomic<Bool>
    /// Set by the control world to fade out; the callback sets `faded` once the output is silent.
    public let fadeRequested: UnsafeAtomic<Bool>
    public let faded: UnsafeAtomic<Bool>
    var fadeGain = SmoothedGain(1)
    let fadeFrames: Int
    /// `run --record`: receives every frame handed to PipeWire, after the stop fade.
    public var record: RecordTap?
    /// Set when the graph has several outputs: this stream renders them all and plays the first.
    public var fanout: UnsafeMutablePointer<OutputFanout>?
    /// Tests only: called with 1 when a callback starts and 0 when it ends (an allocation counter).
    public var probe: (@convention(c) (Int32) -> Void)?

    /// The most frames one callback renders (PipeWire's largest quantum is 8192).
    public static let maxCallbackFrames = 16384

    public init(engine: UnsafeMutablePointer<RenderEngine>, channels: Int, sampleRate: Int, fadeSeconds: Double = 0.05)
    {
        self.engine = engine
        self.channels = channels
        self.sampleRate = sampleRate
        channelPointers = .allocateRender(capacity: channels)
        silence = .allocateRender(capacity: Self.maxCallbackFrames)
        silence.initialize(repeating: 0, count: Self.maxCallbackFrames)
        channelPointers.initialize(repeating: silence, count: channels)
        counters = .create()
        position = .create(nil)
        fadeRequested = .create(false)
        planarFormat = .create(true)
        faded = .create(false)
        resumed = .create(false)
        fadeFrames = max(1, Int(fadeSeconds * Double(sampleRate)))
    }

    public func deallocate() {
        channelPointers.deallocateRender()
        silence.deallocateRender()
        counters.destroy()
        position.destroy()
        fadeRequested.destroy()
        planarFormat.destroy()
        faded.destroy()
        resumed.destroy()
    }

    /// The pw_stream process callback (data thread); `userdata` points at the renderer.
    @_noLocks
    public static func process(_ userdata: UnsafeMutableRawPointer?) {
        guard let userdata else { return }
        let renderer = userdata.assumingMemoryBound(to: PlaybackRenderer.self)
        let probe = renderer.pointee.probe
        // The probe is a test's allocation counter toggle: a thread-local store.
        if let probe { _unsafePerformance { probe(1) } }
        renderer.pointee.process()
        if let probe { _unsafePerformance { probe(0) } }
    }

    /// The body of the pw_stream process callback (data thread).
    @_noLocks
    public mutating func process() {
        let started = MonotonicClock.nanos()
        // Writes the thread's floating-point control register only.
        _unsafePerformance { gh_enable_flush_to_zero() }
        guard let stream else { return }
        if let raw = position.load(ordering: .acquiring) {
            outputCycle.store(
                raw.assumingMemoryBound(to: spa_io_position.self).pointee.clock.position, ordering: .releasing)
        }
        // pw_stream_dequeue_buffer takes a buffer from a lock-free ring shared with the daemon; it never blocks or
        // allocates.
        guard let pwBuffer = _unsafePerformance({ pw_stream_dequeue_buffer(stream) }) else {
            counters.missedBuffers.wrappingIncrement(ordering: .relaxed)
            return
        }
        let buffer = pwBuffer.pointee.buffer!
        let datas = buffer.pointee.datas!
        let dataCount = Int(buffer.pointee.n_datas)
        let planar = planarFormat.load(ordering: .acquiring)
        let stride = planar ? 4 : 4 * channels
        var frames = Int(datas[0].maxsize) / stride
        if pwBuffer.pointee.requested > 0 { frames = min(frames, Int(pwBuffer.pointee.requested)) }
        frames = min(frames, Self.maxCallbackFrames)
        if planar {
            for c in 0..<channels {
                channelPointers[c] =
                    c < dataCount && datas[c].data != nil
                    ? datas[c].data!.assumingMemoryBound(to: Float.self) : silence
            }
        }
        if let fanout {
            // Several outputs: render them all, play the first, and leave the others to their streams.
            engine.pointee.render(frames: frames, planarOutputs: fanout.pointee.tables, count: fanout.pointee.outputs)
            fanout.pointee.frames = frames
            fanout.pointee.rendered += 1
            _ = fanout.pointee.take(
                0, frames: frames, planar: planar ? channelPointers : nil,
                interleaved: planar ? nil : datas[0].data?.assumingMemoryBound(to: Float.self))
        } else if planar {
            engine.pointee.render(frames: frames, planar: channelPointers)
        } else if let data = datas[0].data {
            engine.pointee.render(frames: frames, interleaved: data.assumingMemoryBound(to: Float.self))
        }
        applyFade(frames: frames, planar: planar, datas: datas, dataCount: dataCount)
        noteLevel(frames: frames, planar: planar, datas: datas)
        if let record {
            if planar {
                record.capture(planar: channelPointers, frames: frames)
            } else if let data = datas[0].data {
                record.capture(interleaved: data.assumingMemoryBound(to: Float.self), frames: frames)
            }
        }
        for i in 0..<(planar ? min(channels, dataCount) : 1) {
            datas[i].chunk.pointee.offset = 0
            datas[i].chunk.pointee.stride = Int32(stride)
            datas[i].chunk.pointee.size = UInt32(frames * stride)
        }
        if resumed.exchange(false, ordering: .acquiring) { skipClockCheck = true }
        noteClock(frames: frames)
        counters.restingThrough.store(
            engine.pointee.isResting ? engine.pointee.messages.index.read.load(ordering: .relaxed) : -1,
            ordering: .relaxed)
        // pw_stream_queue_buffer hands the buffer back through the same lock-free ring; real-time safe.
        _ = _unsafePerformance { pw_stream_queue_buffer(stream, pwBuffer) }
        counters.callbacks.wrappingIncrement(ordering: .relaxed)
        counters.frames.wrappingIncrement(by: frames, ordering: .relaxed)
        let busy = MonotonicClock.nanos() - started
        counters.busyNanos.store(busy, ordering: .relaxed)
        if busy > counters.maxBusyNanos.load(ordering: .relaxed) {
            counters.maxBusyNanos.store(busy, ordering: .relaxed)
        }
        let budget = frames * 1_000_000_000 / sampleRate
        counters.budgetNanos.store(budget, ordering: .relaxed)
        if busy > budget {
            // The daemon's cycle went on without us: an xrun, blamed on the slowest node (the clock jump it causes
            // in the next callback is not counted again).
            counters.slowKernel.store(Int(bitPattern: engine.pointee.timing.pointee.slowestKernel), ordering: .relaxed)
            counters.slowNanos.store(engine.pointee.timing.pointee.slowestNanos, ordering: .relaxed)
            counters.overruns.wrappingIncrement(ordering: .releasing)
            counters.xruns.wrappingIncrement(ordering: .relaxed)
            skipClockCheck = true
        }
    }

    /// Stamps the first callback whose output holds a sample above −80 dBFS, and counts the frames since the output
    /// was last above −120 dBFS.
    @_noLocks
    func noteLevel(frames: Int, planar: Bool, datas: UnsafeMutablePointer<spa_data>) {
        var loudest: Float = 0
        if planar {
            for c in 0..<channels {
                loudest = max(loudest, Bus.peak(channelPointers[c], channelStride: 0, channels: 1, from: 0, to: frames))
            }
        } else if let data = datas[0].data {
            loudest = Bus.peak(
                data.assumingMemoryBound(to: Float.self), channelStride: 0, channels: 1, from: 0, to: frames * channels)
        }
        if loudest > 1e-4 && counters.firstSoundNanos.load(ordering: .relaxed) == 0 {
            counters.firstSoundNanos.store(MonotonicClock.nanos(), ordering: .relaxed)
        }
        if loudest > 1e-6 {
            counters.quietFrames.store(0, ordering: .relaxed)
        } else {
            counters.quietFrames.wrappingIncrement(by: frames, ordering: .relaxed)
        }
    }

    /// Counts an xrun when the graph clock moved on by more than one cycle since our last callback.
    @_noLocks
    mutating func noteClock(frames: Int) {
        counters.quantum.store(frames, ordering: .relaxed)
        if frames > counters.largestQuantum.load(ordering: .relaxed) {
            counters.largestQuantum.store(frames, ordering: .relaxed)
        }
        guard let raw = position.load(ordering: .acquiring) else { return }
        let clock = raw.assumingMemoryBound(to: spa_io_position.self).pointee.clock
        if lastClockDuration > 0 && clock.position > lastClockPosition + lastClockDuration && !skipClockCheck {
            counters.xruns.wrappingIncrement(ordering: .relaxed)
        }
        skipClockCheck = false
        lastClockPosition = clock.position
        lastClockDuration = clock.duration
    }

    @_noLocks
    mutating func applyFade(frames: Int, planar: Bool, datas: UnsafeMutablePointer<spa_data>, dataCount: Int) {
        guard fadeRequested.load(ordering: .relaxed) else { return }
        if fadeGain.isSteady && fadeGain.target == 1 { fadeGain.glide(to: 0, over: fadeFrames) }
        for f in 0..<frames {
            let g = fadeGain.next()
            for c in 0..<channels {
                if planar {
                    if c < dataCount, let d = datas[c].data { d.assumingMemoryBound(to: Float.self)[f] *= g }
                } else if let d = datas[0].data {
                    d.assumingMemoryBound(to: Float.self)[f * channels + c] *= g
                }
            }
        }
        if fadeGain.isSteady && fadeGain.current == 0 { faded.store(true, ordering: .releasing) }
    }
}
