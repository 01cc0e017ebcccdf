/// The position in a plan transition's fade, shared by every crossfade of that transition.
/// `gains[i]` is the new side's gain after i frames (a raised cosine from 0 to 1, prepared by the control world);
/// the old side gets 1 − gain, so the mix never exceeds the louder side, however correlated the two are.
///
/// A spillover transition lets the old side ring out instead: the old graph's inputs fade out over the fade
/// (gates), its tails keep sounding at full level while the new side fades in, and once the tails have been
/// quieter than `threshold` for a whole slice, or after `limit` frames, they fade out over the fade's length.
public struct FadeClock {
    public var position = 0
    public let frames: Int
    public let gains: UnsafePointer<Float>
    /// A spillover transition.
    public let spills: Bool
    /// Where the fade proper starts in `gains` (after the pre-roll) and its length.
    public let fadeStart: Int
    /// Spillover: the tails' loudest sample in the current slice, the level below which a tail has ended, the
    /// frame at which the tails begin to fade out (-1: still ringing), and the latest frame it may begin.
    public var tailPeak: Float = 0
    public let threshold: Float
    public var tailEnd = -1
    public var limit: Int

    public init(
        frames: Int, gains: UnsafePointer<Float>, spillover: (fadeStart: Int, threshold: Float, limit: Int)? = nil
    ) {
        self.frames = frames
        self.gains = gains
        spills = spillover != nil
        fadeStart = spillover?.fadeStart ?? 0
        threshold = spillover?.threshold ?? 0
        limit = spillover?.limit ?? 0
    }

    /// Frames until the transition ends (a ringing tail reports what is left of the fade, or of a slice).
    public var remaining: Int {
        @_noLocks get {
            guard spills else { return frames - position }
            if tailEnd >= 0 { return tailEnd + (frames - fadeStart) - position }
            return position < frames ? frames - position : 1 << 30
        }
    }

    /// The gain of a spillover's old side `f` frames into the slice: 1 while the tails ring, then fading out.
    @_noLocks
    public func tailGain(_ f: Int) -> Float {
        let p = position + f
        if tailEnd < 0 || p < tailEnd { return 1 }
        let k = fadeStart + p - tailEnd
        return 1 - gains[k < frames ? k : frames]
    }

    /// After a slice of a spillover: starts the tails' fade-out once they are quiet or the limit is reached.
    @_noLocks
    public mutating func noteSlice() {
        if spills && tailEnd < 0 && position >= frames && (tailPeak < threshold || position >= limit) {
            tailEnd = position
        }
        tailPeak = 0
    }
}

/// Mixes its two inputs (old, new) with the transition's fade: old · (1 − g) + new · g. In a spillover, a
/// `spills` kernel keeps the old side (a tail) at full level instead, and measures it.
public struct CrossfadeKernel {
    public let clock: UnsafeMutablePointer<FadeClock>
    public let spills: Bool

    public init(clock: UnsafeMutablePointer<FadeClock>, spills: Bool = false) {
        self.clock = clock
        self.spills = spills
    }

    @_noLocks
    public func process(
        inputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, output: UnsafeMutablePointer<Float>,
        channelStride: Int, channels: Int, frames: Int
    ) {
        let old = inputs[0]
        let new = inputs[1]
        let start = clock.pointee.position
        let last = clock.pointee.frames
        let gains = clock.pointee.gains
        if spills {
            var peak = clock.pointee.tailPeak
            for c in 0..<channels {
                let o = old + c * channelStride
                let n = new + c * channelStride
                let out = output + c * channelStride
                for f in 0..<frames {
                    let g = gains[min(start + f, last)]
                    let a = o[f] < 0 ? -o[f] : o[f]
                    if a > peak { peak = a }
                    out[f] = o[f] * clock.pointee.tailGain(f) + g * n[f]
                }
            }
            clock.pointee.tailPeak = peak
            return
        }
        for c in 0..<channels {
            let o = old + c * channelStride
            let n = new + c * channelStride
            let out = output + c * channelStride
            for f in 0..<frames {
                let g = gains[min(start + f, last)]
                out[f] = o[f] + g * (n[f] - o[f])
            }
        }
    }
}

extension CrossfadeKernel: RenderKernel {
    @_noLocks
    public func render(_ step: RenderStep, _ slice: RenderSlice) {
        process(
            inputs: step.inputs, output: step.output!, channelStride: slice.channelStride, channels: slice.channels,
            frames: slice.frames)
    }
}
