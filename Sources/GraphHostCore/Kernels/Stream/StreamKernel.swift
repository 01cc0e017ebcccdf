import Atomics

/// Counters a stream kernel publishes to the control world.
public struct StreamCounters: Sendable {
    /// Render slices that found the ring short while the decoder was still running.
    public let underruns: UnsafeAtomic<Int>
    /// Set by the decoder thread after its last frame is in the ring; `decoderFailed` before it when it stopped on an
    /// error (the audio does not end there: it is faded out).
    public let decoderFinished: UnsafeAtomic<Bool>
    public let decoderFailed: UnsafeAtomic<Bool>
    /// Set by the render side once the ring drained after the decoder finished.
    public let finished: UnsafeAtomic<Bool>
    /// Frames this stream has played (including silence while buffering).
    public let framesOut: UnsafeAtomic<Int>
    /// The stream position in frames where its audio ended.
    public let endFrame: UnsafeAtomic<Int>
    /// True while audio flows (not buffering or rebuffering); frames of audio played so far.
    public let playing: UnsafeAtomic<Bool>
    public let framesPlayed: UnsafeAtomic<Int>
    /// Frames of silence played after the audio first started: the rest of a slice the ring ran dry in, and the slices
    /// until it buffered again.
    public let rebufferedFrames: UnsafeAtomic<Int>
    /// A live input's level: the peak of its latest slice, as Float bits.
    public let peakBits: UnsafeAtomic<UInt32>
    /// Frames a live input dropped to keep its latency (it got ahead when the output missed a cycle).
    public let trimmedFrames: UnsafeAtomic<Int>
    /// Seeks, numbered from 1. The decoder, once it has moved, stores the ring position where the new audio begins and
    /// its position in the media (graph-rate frames), then the seek's number (before it writes any new audio).
    public let seekBoundary: UnsafeAtomic<Int>
    public let seekFrame: UnsafeAtomic<Int>
    public let seekDone: UnsafeAtomic<Int>
    /// The latest seek the kernel has finished crossfading into.
    public let seekHandled: UnsafeAtomic<Int>
    /// Wakes the decoder thread once the kernel has read the room it waits for.
    public let room: RingSignal

    public static func create() -> StreamCounters {
        StreamCounters(
            underruns: .create(0), decoderFinished: .create(false), decoderFailed: .create(false),
            finished: .create(false),
            framesOut: .create(0), endFrame: .create(0), playing: .create(false), framesPlayed: .create(0),
            rebufferedFrames: .create(0), peakBits: .create(0), trimmedFrames: .create(0), seekBoundary: .create(0),
            seekFrame: .create(0), seekDone: .create(0), seekHandled: .create(0), room: .create())
    }

    public func destroy() {
        underruns.destroy()
        decoderFinished.destroy()
        decoderFailed.destroy()
        finished.destroy()
        framesOut.destroy()
        endFrame.destroy()
        playing.destroy()
        framesPlayed.destroy()
        rebufferedFrames.destroy()
        peakBits.destroy()
        trimmedFrames.destroy()
        seekBoundary.destroy()
        seekFrame.destroy()
        seekDone.destroy()
        seekHandled.destroy()
        room.destroy()
    }

    /// The peak of a live input's latest slice.
    public var peak: Float { Float(bitPattern: peakBits.load(ordering: .relaxed)) }
}

/// The render side of the `stream` node: copies decoded PCM out of its ring. It starts once `startThreshold` frames
/// are buffered; when the ring runs dry before the decoder ended it plays silence, counts an underrun and
/// rebuffers up to the threshold again before resuming. Audio that stops short of the media's end (the ring about
/// to run dry, or the decoder failed) fades out over what is left, at most `seekFadeFrames`, and fades in again
/// when it resumes.
///
/// A seek crossfades: the old audio plays on until the decoder has put the new audio after a boundary in the ring,
/// then the two overlap for `seekFadeFrames` (equal power), and the old audio left before the boundary is dropped.
public struct StreamKernel {
    public enum Change {
        /// Seek number `n` was requested (the decoder is told directly).
        case seek(Int)
    }
    public var ring: PCMRing
    public var counters: StreamCounters
    /// Frames that must be buffered before playback starts.
    public var startThreshold: Int
    public var playing = false
    public var finished = false
    /// A live input's alignment to the output's cycles (nil for a decoded stream), and the frames of silence it still
    /// owes before the ring's audio (the input missed a cycle).
    public var alignment: LiveInputAlignment?
    var padFrames = 0

    /// The latest seek whose message arrived (0: none), the crossfade frames done, and the latest seek crossed.
    var seeking = 0
    var seekFaded = 0
    var seekHandled = 0
    /// Crossfade length, its fade-in gains (`seekFadeFrames` of them; the fade-out runs them backwards: equal power),
    /// and a planar buffer of `scratchFrames` per channel for the new audio (seekable streams only).
    public var seekFadeFrames = 0
    public var seekFadeGains: UnsafeMutablePointer<Float>?
    public var seekScratch: UnsafeMutablePointer<Float>?
    public var scratchFrames = 0
    /// The gain of the fades around a ring that runs dry, and their length: the fade-out starts when no more than a
    /// slice and this many frames are left (shorter than the seek crossfade for a small buffer, which runs that low
    /// by design).
    var dryFade = SmoothedGain(1)
    public var dryFadeFrames = 0

    public init(ring: PCMRing, counters: StreamCounters, startThreshold: Int) {
        self.ring = ring
        self.counters = counters
        self.startThreshold = startThreshold
    }

    @_noLocks
    public mutating func apply(_ change: Change) {
        switch change {
        case .seek(let n):
            seeking = n
            seekFaded = 0
        }
    }

    /// Renders a slice; with `levels`, adds the output's levels to them and returns whether they cover all of it (a
    /// plain read of two channels, not a crossfade, a fade or a live input).
    @_noLocks @discardableResult
    public mutating func process(
        output: UnsafeMutablePointer<Float>, channelStride: Int, channels: Int, frames: Int,
        levels: LevelMeter.RunLevels? = nil
    ) -> Bool {
        defer { counters.room.roomFreed(in: ring.index) }
        // The ring's fill is read before the seek counters: frames written after a seek boundary are only visible
        // together with that boundary.
        let filled = ring.index.readable()
        var cap: Int?
        let done = counters.seekDone.load(ordering: .acquiring)
        if done > seekHandled {
            // The decoder has put a seek's new audio after a boundary: the old audio plays up to it until the seek's
            // message arrives, then the two crossfade.
            let boundary = counters.seekBoundary.load(ordering: .relaxed)
            let ahead = boundary - ring.index.read.load(ordering: .relaxed)
            let old = ahead > 0 ? ahead : 0
            if seeking == done {
                if crossfadeSeek(
                    output: output, channelStride: channelStride, channels: channels, frames: frames,
                    old: old, fresh: filled - old)
                {
                    return false
                }
            }
            if done > seekHandled { cap = old }
        } else if seeking != 0 && counters.decoderFinished.load(ordering: .acquiring) {
            seeking = 0  // the media ended before the decoder moved: it plays out
        }
        return processBuffered(
            output: output, channelStride: channelStride, channels: channels, frames: frames, readable: cap,
            levels: levels)
    }

    /// Crossfades into the new audio of seek `seeking` once enough of it is buffered; true when it rendered the slice.
    @_noLocks
    mutating func crossfadeSeek(
        output: UnsafeMutablePointer<Float>, channelStride: Int, channels: Int, frames: Int,
        old: Int, fresh: Int
    ) -> Bool {
        let decoderDone = counters.decoderFinished.load(ordering: .acquiring)
        if seekFaded == 0 {
            guard playing, seekScratch != nil, seekFadeGains != nil, seekFadeFrames > 0 else {
                // Not playing: the new audio simply starts, after the usual buffering.
                _ = ring.discard(old)
                finishSeek()
                return false
            }
            guard fresh >= seekFadeFrames + frames || decoderDone else { return false }
            counters.framesPlayed.store(counters.seekFrame.load(ordering: .relaxed), ordering: .relaxed)
        }
        let position = counters.framesOut.load(ordering: .relaxed)
        counters.framesOut.store(position + frames, ordering: .relaxed)
        var fade = seekFadeFrames - seekFaded
        if frames < fade { fade = frames }
        if scratchFrames < fade { fade = scratchFrames }
        // The old audio fading out (silence where it ran out).
        let got = ring.readPlanar(into: output, channelStride: channelStride, frames: old < fade ? old : fade)
        Bus.clear(output, channelStride: channelStride, channels: channels, from: got, to: fade)
        // The new audio fading in, peeked from beyond the boundary.
        let scratch = seekScratch!
        let newOffset = old - got + seekFaded
        let peeked = ring.peekPlanar(offset: newOffset, into: scratch, channelStride: scratchFrames, frames: fade)
        Bus.clear(scratch, channelStride: scratchFrames, channels: channels, from: peeked, to: fade)
        let gains = seekFadeGains!
        for f in 0..<fade {
            let fadeIn = gains[seekFaded + f]
            let fadeOut = gains[seekFadeFrames - 1 - seekFaded - f]
            for c in 0..<channels {
                output[c * channelStride + f] =
                    output[c * channelStride + f] * fadeOut + scratch[c * scratchFrames + f] * fadeIn
            }
        }
        seekFaded += fade
        counters.framesPlayed.wrappingIncrement(by: fade, ordering: .relaxed)
        if seekFaded >= seekFadeFrames {
            // Done: the old audio left and the new audio already heard go.
            _ = ring.discard(old - got + seekFaded)
            finishSeek()
            if fade < frames {
                counters.framesOut.store(position + fade, ordering: .relaxed)
                processBuffered(
                    output: output + fade, channelStride: channelStride, channels: channels, frames: frames - fade,
                    readable: nil)
            }
        } else if fade < frames {
            Bus.clear(output, channelStride: channelStride, channels: channels, from: fade, to: frames)
        }
        return true
    }

    @_noLocks
    mutating func finishSeek() {
        seekHandled = counters.seekDone.load(ordering: .relaxed)
        counters.seekHandled.store(seekHandled, ordering: .releasing)
        seeking = 0
        seekFaded = 0
    }

    /// Plays what is buffered; `readable` caps what may be read (frames beyond it may belong to a seek not yet seen).
    /// Returns whether it added the whole output to `levels`.
    @_noLocks @discardableResult
    mutating func processBuffered(
        output: UnsafeMutablePointer<Float>, channelStride: Int, channels: Int, frames: Int, readable: Int?,
        levels: LevelMeter.RunLevels? = nil
    ) -> Bool {
        let position = counters.framesOut.load(ordering: .relaxed)
        counters.framesOut.store(position + frames, ordering: .relaxed)
        let decoderDone = counters.decoderFinished.load(ordering: .acquiring)
        if alignment != nil {
            processLive(output: output, channelStride: channelStride, channels: channels, frames: frames)
            return false
        }
        if !playing {
            if ring.index.readable() >= startThreshold || decoderDone {
                playing = true
                counters.playing.store(true, ordering: .relaxed)
            } else {
                Bus.clear(output, channelStride: channelStride, channels: channels, from: 0, to: frames)
                if counters.framesPlayed.load(ordering: .relaxed) > 0 {
                    counters.rebufferedFrames.wrappingIncrement(by: frames, ordering: .relaxed)
                }
                return levels != nil
            }
        }
        var wanted = frames
        if let readable, readable < wanted { wanted = readable }
        if readable == nil && dryFadeFrames > 0 {
            // Fewer frames than this slice and a fade would be left, and the media has not ended: fade out what is
            // left.
            let left = ring.index.readable()
            let endsEarly = !decoderDone || counters.decoderFailed.load(ordering: .relaxed)
            if endsEarly && left < frames + dryFadeFrames {
                if dryFade.target != 0 { dryFade.glide(to: 0, over: left < dryFadeFrames ? left : dryFadeFrames) }
            } else if dryFade.target != 1 {
                dryFade.glide(to: 1, over: dryFadeFrames)
            }
        }
        let measuring = levels != nil && channels == 2 && dryFade.isSteady && dryFade.current == 1
        let got = ring.readPlanar(
            into: output, channelStride: channelStride, frames: wanted, levels: measuring ? levels : nil)
        dryFade.scale(output, channelStride: channelStride, channels: channels, frames: got)
        counters.framesPlayed.wrappingIncrement(by: got, ordering: .relaxed)
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
                counters.rebufferedFrames.wrappingIncrement(by: frames - got, ordering: .relaxed)
                playing = false
                counters.playing.store(false, ordering: .relaxed)
            }
        }
        return measuring
    }

    /// A live input's slice: aligned at each new output cycle, then what is buffered, with silence where the input
    /// fell short (a dropout, counted once until audio flows again).
    @_noLocks
    mutating func processLive(output: UnsafeMutablePointer<Float>, channelStride: Int, channels: Int, frames: Int) {
        let correction = alignment!.correction(readable: ring.index.readable())
        if correction > 0 {
            counters.trimmedFrames.wrappingIncrement(by: ring.discard(correction), ordering: .relaxed)
        } else if correction < 0 {
            padFrames = -correction
        }
        let pad = padFrames < frames ? padFrames : frames
        padFrames -= pad
        Bus.clear(output, channelStride: channelStride, channels: channels, from: 0, to: pad)
        let got = ring.readPlanar(into: output + pad, channelStride: channelStride, frames: frames - pad)
        counters.framesPlayed.wrappingIncrement(by: got, ordering: .relaxed)
        if pad + got < frames {
            Bus.clear(output, channelStride: channelStride, channels: channels, from: pad + got, to: frames)
        }
        let peak = Bus.peak(output, channelStride: channelStride, channels: channels, from: pad, to: pad + got)
        counters.peakBits.store(peak.bitPattern, ordering: .relaxed)
        if got > 0 && pad == 0 && !playing {
            playing = true
            counters.playing.store(true, ordering: .relaxed)
        } else if playing && (pad > 0 || got < frames) {
            counters.underruns.wrappingIncrement(ordering: .relaxed)
            playing = false
            counters.playing.store(false, ordering: .relaxed)
        }
    }
}

extension StreamKernel: RenderKernel {
    @_noLocks
    public mutating func render(_ step: RenderStep, _ slice: RenderSlice) {
        let levels = step.meter?.pointee.runLevels(channels: slice.channels)
        let measured = process(
            output: step.output!, channelStride: slice.channelStride, channels: slice.channels, frames: slice.frames,
            levels: levels)
        if measured { step.meter!.pointee.kernelMeasured() }
    }
}
