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

    public static func create() -> StreamCounters {
        StreamCounters(underruns: .create(0), decoderFinished: .create(false), finished: .create(false),
                       framesOut: .create(0), endFrame: .create(0), playing: .create(false), framesPlayed: .create(0),
                       peakBits: .create(0))
    }

    public func destroy() {
        underruns.destroy(); decoderFinished.destroy(); finished.destroy(); framesOut.destroy(); endFrame.destroy()
        playing.destroy(); framesPlayed.destroy(); peakBits.destroy()
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
    /// output's in a cycle and one quantum when after; a dropout (the order changed) raises it to two, which holds
    /// whatever the order.
    public var primeSlices = 0

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
                if primeSlices == 1 { primeSlices = 2 }
                playing = false
                counters.playing.store(false, ordering: .relaxed)
            }
        }
    }
}
