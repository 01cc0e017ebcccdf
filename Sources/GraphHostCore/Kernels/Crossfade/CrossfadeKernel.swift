/// The position in a plan transition's fade, shared by every crossfade of that transition.
/// `gains[i]` is the new side's gain after i frames (a raised cosine from 0 to 1, prepared by the control world);
/// the old side gets 1 − gain, so the mix never exceeds the louder side, however correlated the two are.
public struct FadeClock {
    public var position = 0
    public let frames: Int
    public let gains: UnsafePointer<Float>

    public init(frames: Int, gains: UnsafePointer<Float>) {
        self.frames = frames
        self.gains = gains
    }

    public var remaining: Int {
        @_noLocks get { frames - position }
    }
}

/// Mixes its two inputs (old, new) with the transition's fade: old · (1 − g) + new · g.
public struct CrossfadeKernel {
    public let clock: UnsafeMutablePointer<FadeClock>

    public init(clock: UnsafeMutablePointer<FadeClock>) { self.clock = clock }

    @_noLocks
    public func process(inputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, output: UnsafeMutablePointer<Float>,
                        channelStride: Int, channels: Int, frames: Int) {
        let old = inputs[0], new = inputs[1]
        let start = clock.pointee.position, last = clock.pointee.frames
        let gains = clock.pointee.gains
        for c in 0..<channels {
            let o = old + c * channelStride, n = new + c * channelStride, out = output + c * channelStride
            for f in 0..<frames {
                let g = gains[min(start + f, last)]
                out[f] = o[f] + g * (n[f] - o[f])
            }
        }
    }
}
