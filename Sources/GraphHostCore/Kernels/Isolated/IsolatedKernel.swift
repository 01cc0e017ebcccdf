import Atomics
import Glibc

/// The render side of a plugin node that runs in a helper process: the node runs one block late. Each render call
/// collects the block posted by the previous call (the helper's output, or its dry input when the helper did not
/// finish in time), posts this call's input buses and musical time, and plays `latency` frames behind its input from
/// a FIFO per output bus: the frames ready plus the frames in flight always make `latency`. The render world never
/// waits live; offline it waits for the helper at most `offlineWaitMillis` per block. Events (an input bus that
/// carries MIDI) posted while the helper was busy are carried to the next block it takes, at its first frame, so a
/// note is late rather than lost; while the helper is `gone` they are dropped.
public struct IsolatedKernel {
    public let block: IsolatedBlock
    /// The eventfd the helper waits on, and the one it signals after each block.
    public let wakeFD: Int32
    public let doneFD: Int32
    public var latency: Int { block.frames }
    /// A plugin without audio inputs (an instrument) has no dry signal: a missed block is silence.
    public let dryIsSilence: Bool
    /// The input bus that carries events (-1: none).
    public let eventBus: Int
    /// Whether the main output carries events (a plugin that sends MIDI): they wait in `outEvents` at their place in
    /// the FIFO, as an atom sequence whose event frames count from the FIFO's start.
    public let eventOutput: Bool
    let outEvents: UnsafeMutableRawPointer
    /// midi:MidiEvent's URID, for the All Notes Off the kernel sends itself.
    public let midiEventType: UInt32
    /// This node's main input for the block in flight (`latency` frames per channel): its dry signal.
    let pending: UnsafeMutablePointer<Float>
    /// Output ready to play per output bus, `latency` frames per channel, the oldest first.
    let fifo: UnsafeMutablePointer<Float>
    /// The last frame appended to each output bus's FIFO per channel, and the jump being decayed after a switch to
    /// the dry signal.
    let last: UnsafeMutablePointer<Float>
    let jump: UnsafeMutablePointer<Float>
    /// `latency` frames of silence per channel: the dry signal of an instrument and of the extra output buses.
    let silence: UnsafeMutablePointer<Float>
    /// Events of blocks that were not posted, as an atom sequence.
    let carried: UnsafeMutableRawPointer
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
    /// Set by the supervisor while the helper is gone (crashed, killed, being restarted), when events are dropped
    /// rather than carried.
    public let gone: UnsafeAtomic<Bool>

    /// The floats of render memory a kernel for `block` needs.
    public static func memoryFloats(_ block: IsolatedBlock) -> Int {
        let bus = block.channels * block.frames
        return (4 + block.outputBuses) * bus + 2 * block.outputBuses * block.channels
    }

    /// `memory` is render memory of `memoryFloats(block)` floats, which the kernel uses as long as it lives.
    public init(
        block: IsolatedBlock, wakeFD: Int32, doneFD: Int32, dryIsSilence: Bool, eventBus: Int,
        eventOutput: Bool = false, midiEventType: UInt32 = 0, fadeSamples: Int, offlineWaitMillis: Int32,
        memory: UnsafeMutablePointer<Float>
    ) {
        self.block = block
        self.wakeFD = wakeFD
        self.doneFD = doneFD
        self.dryIsSilence = dryIsSilence
        self.eventBus = eventBus
        self.eventOutput = eventOutput
        self.midiEventType = midiEventType
        self.fadeSamples = fadeSamples
        self.offlineWaitMillis = offlineWaitMillis
        let bus = block.channels * block.frames
        memory.initialize(repeating: 0, count: Self.memoryFloats(block))
        pending = memory
        silence = memory + bus
        carried = UnsafeMutableRawPointer(memory + 2 * bus)
        outEvents = UnsafeMutableRawPointer(memory + 3 * bus)
        fifo = memory + 4 * bus
        last = fifo + block.outputBuses * bus
        jump = last + block.outputBuses * block.channels
        Self.startSequence(carried, like: carried)
        Self.startSequence(outEvents, like: outEvents)
        ready = block.frames
        missedInARow = .create(0)
        missed = .create(0)
        retired = .create(false)
        gone = .create(false)
    }

    /// Frees the counters (control world, once nothing renders).
    public func destroy() {
        missedInARow.destroy()
        missed.destroy()
        retired.destroy()
        gone.destroy()
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

    /// Appends the block in flight to the FIFOs: the helper's output blended with the dry signal, or (the helper late,
    /// gone, or its output unsafe to hear) the dry signal alone with the jump from the last frame decayed over
    /// `jumpSamples`. The main output's dry signal is the main input (silence for an instrument); the other output
    /// buses' is silence.
    @_noLocks
    mutating func collect() {
        let frames = pendingFrames
        guard frames > 0 else { return }
        let stride = block.frames
        let channels = block.channels
        let bus = channels * stride
        let buses = block.outputBuses
        let mainDry = dryIsSilence ? silence : pending
        let firstAudio = eventOutput ? 1 : 0
        // The helper's kernel silences unsafe slices itself; one that wrote garbage into the shared block is not heard.
        var heard = pendingSequence != 0 && helperFinished()
        for b in firstAudio..<buses where heard {
            heard = Bus.isSafe(block.output(b), channelStride: stride, channels: channels, frames: frames)
        }
        if eventOutput { collectEvents(heard: heard) }
        if heard {
            if wet.target == 0 { wet.glide(to: 1, over: fadeSamples) }
            let gain = wet
            for b in firstAudio..<buses {
                let into = fifo + b * bus + ready
                let from = block.output(b)
                for c in 0..<channels {
                    for f in 0..<frames { into[c * stride + f] = from[c * stride + f] }
                }
                // Every bus fades in by the same gain, from its own dry signal.
                var fade = gain
                fade.blend(
                    input: b == 0 ? mainDry : silence, output: into, channelStride: stride, channels: channels,
                    frames: frames)
                wet = fade
            }
            missedInARow.store(0, ordering: .relaxed)
        } else {
            for b in firstAudio..<buses {
                let into = fifo + b * bus + ready
                let dry = b == 0 ? mainDry : silence
                for c in 0..<channels {
                    for f in 0..<frames { into[c * stride + f] = dry[c * stride + f] }
                }
                if wet.current != 0 || !wet.isSteady {
                    for c in 0..<channels { jump[b * channels + c] = last[b * channels + c] - into[c * stride] }
                }
            }
            if wet.current != 0 || !wet.isSteady { jumpLeft = Self.jumpSamples }
            wet.glide(to: 0, over: 0)
            missedInARow.wrappingIncrement(ordering: .relaxed)
            missed.wrappingIncrement(ordering: .relaxed)
        }
        let decay = min(jumpLeft, frames)
        for b in firstAudio..<buses {
            let into = fifo + b * bus + ready
            for c in 0..<channels {
                let to = into + c * stride
                let j = jump[b * channels + c]
                for f in 0..<decay { to[f] += j * Float(jumpLeft - f) / Float(Self.jumpSamples) }
                last[b * channels + c] = to[frames - 1]
            }
        }
        jumpLeft -= decay
        ready += frames
        pendingFrames = 0
    }

    /// Appends the events the helper sent for the block in flight to `outEvents`, at their place in the FIFO. A block
    /// missed after one that was heard sends All Notes Off on every channel instead, so no note the plugin started
    /// hangs while it is gone.
    @_noLocks
    mutating func collectEvents(heard: Bool) {
        let capacity = block.channels * block.frames * MemoryLayout<Float>.size
        if heard {
            let sent = UnsafeRawPointer(block.output(0))
            outEvents.storeBytes(of: sent.load(fromByteOffset: 4, as: UInt32.self), toByteOffset: 4, as: UInt32.self)
            Self.appendEvents(
                from: sent, sourceBytes: capacity, skip: -ready, atStart: false, to: outEvents, capacity: capacity)
        } else if wet.current != 0 || !wet.isSteady {
            for channel in 0..<16 {
                let used = 8 + Int(outEvents.load(as: UInt32.self))
                guard used + 24 <= capacity else { break }
                let event = outEvents + used
                event.storeBytes(of: Int64(ready), as: Int64.self)
                event.storeBytes(of: UInt32(3), toByteOffset: 8, as: UInt32.self)
                event.storeBytes(of: midiEventType, toByteOffset: 12, as: UInt32.self)
                // Control change 123, All Notes Off, and padding to 8 bytes.
                event.storeBytes(of: UInt64(0xB0 | channel) | 123 << 8, toByteOffset: 16, as: UInt64.self)
                outEvents.storeBytes(of: UInt32(used - 8 + 24), as: UInt32.self)
            }
        }
    }

    /// Writes the events due in the first `played` frames of the FIFO to `output` as an atom sequence, and moves the
    /// others `played` frames nearer.
    @_noLocks
    mutating func playEvents(into output: UnsafeMutableRawPointer, played: Int) {
        let capacity = block.channels * block.frames * MemoryLayout<Float>.size
        Self.startSequence(output, like: UnsafeRawPointer(outEvents))
        let end = 8 + Int(outEvents.load(as: UInt32.self))
        var offset = 16
        var kept = 16
        while offset + 16 <= end {
            let frame = outEvents.load(fromByteOffset: offset, as: Int64.self)
            let padded = (16 + Int(outEvents.load(fromByteOffset: offset + 8, as: UInt32.self)) + 7) & ~7
            if frame < Int64(played) {
                let used = 8 + Int(output.load(as: UInt32.self))
                if used + padded <= capacity {
                    for i in 0..<padded {
                        (output + used + i).storeBytes(
                            of: outEvents.load(fromByteOffset: offset + i, as: UInt8.self), as: UInt8.self)
                    }
                    output.storeBytes(of: UInt32(used - 8 + padded), as: UInt32.self)
                }
            } else {
                for i in 0..<padded {
                    (outEvents + kept + i).storeBytes(
                        of: outEvents.load(fromByteOffset: offset + i, as: UInt8.self), as: UInt8.self)
                }
                (outEvents + kept).storeBytes(of: frame - Int64(played), as: Int64.self)
                kept += padded
            }
            offset += padded
        }
        outEvents.storeBytes(of: UInt32(kept - 8), as: UInt32.self)
    }

    /// Posts the last `frames` ≤ `latency` frames of the step's input buses (the first `skip` frames of the call are
    /// left out) to the helper when it is idle; they are the block in flight either way.
    @_noLocks
    mutating func post(_ step: RenderStep, _ slice: RenderSlice, skip: Int, frames: Int) {
        let stride = block.frames
        let channels = min(slice.channels, block.channels)
        let main = step.inputs[0]
        if eventBus != 0 {
            for c in 0..<channels {
                let from = main + c * slice.channelStride + skip
                let to = pending + c * stride
                for f in 0..<frames { to[f] = from[f] }
            }
        }
        pendingFrames = frames
        pendingSequence = 0
        let posted = block.posted.load(ordering: .relaxed)
        let sourceBytes = block.channels * slice.channelStride * MemoryLayout<Float>.size
        let eventBytes = block.channels * stride * MemoryLayout<Float>.size
        guard helperIdle(posted) else {
            if gone.load(ordering: .relaxed) {
                // The helper is gone or being restarted: its plugin holds no notes, and old ones are not news.
                Self.startSequence(carried, like: carried)
            } else if eventBus >= 0 && eventBus < step.inputCount {
                Self.appendEvents(
                    from: UnsafeRawPointer(step.inputs[eventBus]), sourceBytes: sourceBytes, skip: skip, atStart: true,
                    to: carried, capacity: eventBytes)
            }
            return
        }
        for b in 0..<min(block.inputBuses, step.inputCount) {
            let to = block.input(b)
            if b == eventBus {
                Self.startSequence(to, like: UnsafeRawPointer(step.inputs[b]))
                Self.appendEvents(
                    from: UnsafeRawPointer(carried), sourceBytes: eventBytes, skip: 0, atStart: true, to: to,
                    capacity: eventBytes)
                Self.startSequence(carried, like: UnsafeRawPointer(step.inputs[b]))
                Self.appendEvents(
                    from: UnsafeRawPointer(step.inputs[b]), sourceBytes: sourceBytes, skip: skip, atStart: false,
                    to: to, capacity: eventBytes)
                continue
            }
            let source = b == 0 ? pending : step.inputs[b] + skip
            let sourceStride = b == 0 ? stride : slice.channelStride
            for c in 0..<block.channels {
                let into = to + c * stride
                if c < channels {
                    let from = source + c * sourceStride
                    for f in 0..<frames { into[f] = from[f] }
                } else {
                    for f in 0..<frames { into[f] = 0 }
                }
            }
        }
        block.hasTime.pointee = slice.time != nil
        if let time = slice.time { block.time.pointee = time.pointee }
        block.postedFrames.store(frames, ordering: .relaxed)
        block.posted.store(posted + 1, ordering: .releasing)
        pendingSequence = posted + 1
        var one: UInt64 = 1
        // An eventfd write never blocks while its counter is far below its maximum.
        _ = _unsafePerformance { write(wakeFD, &one, 8) }
    }

    /// Makes `target` an empty atom sequence of the type of the one at `source`.
    @_noLocks
    static func startSequence(_ target: UnsafeMutableRawPointer, like source: UnsafeRawPointer) {
        target.storeBytes(of: UInt32(8), as: UInt32.self)
        target.storeBytes(of: source.load(fromByteOffset: 4, as: UInt32.self), toByteOffset: 4, as: UInt32.self)
        target.storeBytes(of: UInt64(0), toByteOffset: 8, as: UInt64.self)
    }

    /// Appends the events of the atom sequence at `source` (at most `sourceBytes` long) to the one at `target`
    /// (`capacity` bytes): at their frame less `skip` (events before it at 0), or all at frame 0 when `atStart`.
    /// Events that do not fit are dropped.
    @_noLocks
    static func appendEvents(
        from source: UnsafeRawPointer, sourceBytes: Int, skip: Int, atStart: Bool, to target: UnsafeMutableRawPointer,
        capacity: Int
    ) {
        let end = min(8 + Int(source.load(as: UInt32.self)), sourceBytes)
        var offset = 16
        while offset + 16 <= end {
            let frame = source.load(fromByteOffset: offset, as: Int64.self)
            let bytes = 16 + Int(source.load(fromByteOffset: offset + 8, as: UInt32.self))
            let padded = (bytes + 7) & ~7
            guard offset + bytes <= end else { return }
            let used = 8 + Int(target.load(as: UInt32.self))
            if used + padded <= capacity {
                let at = target + used
                for i in 0..<bytes {
                    at.storeBytes(
                        of: source.load(fromByteOffset: offset + i, as: UInt8.self), toByteOffset: i, as: UInt8.self)
                }
                at.storeBytes(of: atStart ? 0 : max(0, frame - Int64(skip)), as: Int64.self)
                target.storeBytes(of: UInt32(used - 8 + padded), as: UInt32.self)
            }
            offset += padded
        }
    }
}

extension IsolatedKernel: RenderKernel {
    @_noLocks
    public mutating func render(_ step: RenderStep, _ slice: RenderSlice) {
        guard let output = step.output else { return }
        let input = step.inputs[0]
        let frames = slice.frames
        let stride = block.frames
        let bus = block.channels * stride
        let channels = min(slice.channels, block.channels)
        collect()
        let played = min(frames, ready)
        if eventOutput { playEvents(into: UnsafeMutableRawPointer(output), played: played) }
        for b in (eventOutput ? 1 : 0)..<block.outputBuses {
            let to = b == 0 ? output : step.extraOutputs.map { $0[b - 1] }
            for c in 0..<channels {
                let from = fifo + b * bus + c * stride
                if let to {
                    let into = to + c * slice.channelStride
                    for f in 0..<played { into[f] = from[f] }
                    // A call longer than the latency: its first frames were never posted, and play dry.
                    let dry = input + c * slice.channelStride
                    for f in played..<frames { into[f] = b == 0 && !dryIsSilence ? dry[f - played] : 0 }
                }
                for f in played..<ready { from[f - played] = from[f] }
            }
        }
        ready -= played
        let posted = min(frames, stride)
        post(step, slice, skip: frames - posted, frames: posted)
    }
}
