import Atomics

/// Counters a stream kernel publishes to the control world.
public struct StreamCounters: Sendable {
    /// Render slices that found the ring short while the decoder was still running.
    public let underruns: UnsafeAtomic<Int>
    /// Set by the decoder thread after its last frame is in the ring.
    public let decoderFinished: UnsafeAtomic<Bool>
    /// Set by the render side once the ring drained after the decoder finished.
    public let finished: UnsafeAtomic<Bool>
    /// Frames this stream has played (including silence while buffering).
    public let framesOut: UnsafeAtomic<Int>
    /// The stream position in frames where its audio ended.
    public let endFrame: UnsafeAtomic<Int>
    /// True while audio flows (not buffering or rebuffering); frames of audio played so far.
    public let playing: UnsafeAtomic<Bool>
    public let framesPlayed: UnsafeAtomic<Int>
    /// A live input's level: the peak of its latest slice, as Float bits.
    public let peakBits: UnsafeAtomic<UInt32>
    /// Frames a live input dropped to keep its latency (it got ahead when the output missed a cycle).
    public let trimmedFrames: UnsafeAtomic<Int>

    public static func create() -> StreamCounters {
        StreamCounters(underruns: .create(0), decoderFinished: .create(false), finished: .create(false),
                       framesOut: .create(0), endFrame: .create(0), playing: .create(false), framesPlayed: .create(0),
                       peakBits: .create(0), trimmedFrames: .create(0))
    }

    public func destroy() {
        underruns.destroy(); decoderFinished.destroy(); finished.destroy(); framesOut.destroy(); endFrame.destroy()
        playing.destroy(); framesPlayed.destroy(); peakBits.destroy(); trimmedFrames.destroy()
    }

    /// The peak of a live input's latest slice.
    public var peak: Float { Float(bitPattern: peakBits.load(ordering: .relaxed)) }
}

/// The render side of the `stream` node: copies decoded PCM out of its ring. It starts once `startThreshold` frames
/// are buffered; when the ring runs dry before the decoder ended it plays silence, counts an underrun and
/// rebuffers up to the threshold again before resuming.
public struct StreamKernel {
    public var ring: PCMRing
    public var counters: StreamCounters
    /// Frames that must be buffered before playback starts.
    public var startThreshold: Int
    public var playing = false
    public var finished = false
    /// A live input: it starts (and restarts after a dropout) once this many slices are buffered, whatever their
    /// size (0: `startThreshold` frames). One slice adds no latency when the input's callback runs before the
    /// output's in a cycle and one quantum when after. After a lone dropout (a late cycle) it restarts at one slice,
    /// at the latency it had; a second dropout within `dropoutSpan` frames (the order keeps changing) raises it to two,
    /// which holds whatever the order.
    public var primeSlices = 0
    var lastDropout = Int.min / 2
    /// Frames a live input's stream writes per cycle (its producer stores them).
    public var inputCycleFrames: UnsafeAtomic<Int>?
    public static let dropoutSpan = 96000

    public init(ring: PCMRing, counters: StreamCounters, startThreshold: Int) {
        self.ring = ring
        self.counters = counters
        self.startThreshold = startThreshold
    }

    @_noLocks
    public mutating func process(output: UnsafeMutablePointer<Float>, channelStride: Int, channels: Int, frames: Int) {
        let position = counters.framesOut.load(ordering: .relaxed)
        counters.framesOut.store(position + frames, ordering: .relaxed)
        let decoderDone = counters.decoderFinished.load(ordering: .acquiring)
        if !playing {
            if ring.index.readable() >= (primeSlices > 0 ? primeSlices * frames : startThreshold) || decoderDone {
                playing = true
                counters.playing.store(true, ordering: .relaxed)
            } else {
                Bus.clear(output, channelStride: channelStride, channels: channels, from: 0, to: frames)
                return
            }
        }
        // A live input's unit is the larger of a slice and what its stream writes per cycle (a render call may be
        // cut into several slices).
        let written = inputCycleFrames?.load(ordering: .relaxed) ?? 0
        let unit = written > frames ? written : frames
        if primeSlices > 0 && ring.index.readable() > (primeSlices + 1) * unit {
            // A live input ahead of its latency (the output missed a cycle the input did not): the oldest frames go, so
            // the latency comes back to what it was instead of growing.
            let excess = ring.index.readable() - primeSlices * unit
            counters.trimmedFrames.wrappingIncrement(by: ring.discard(excess), ordering: .relaxed)
        }
        let got = ring.readPlanar(into: output, channelStride: channelStride, frames: frames)
        counters.framesPlayed.wrappingIncrement(by: got, ordering: .relaxed)
        if primeSlices > 0 {
            var peak: Float = 0
            for c in 0..<channels {
                let channel = output + c * channelStride
                for f in 0..<got { let v = channel[f] < 0 ? -channel[f] : channel[f]; if v > peak { peak = v } }
            }
            counters.peakBits.store(peak.bitPattern, ordering: .relaxed)
        }
        if got < frames {
            Bus.clear(output, channelStride: channelStride, channels: channels, from: got, to: frames)
            if decoderDone {
                if !finished {
                    finished = true
                    counters.endFrame.store(position + got, ordering: .relaxed)
                    counters.finished.store(true, ordering: .releasing)
                }
            } else {
                counters.underruns.wrappingIncrement(ordering: .relaxed)
                if primeSlices == 1 && position - lastDropout < Self.dropoutSpan { primeSlices = 2 }
                lastDropout = position
                playing = false
                counters.playing.store(false, ordering: .relaxed)
            }
        }
    }
}
