/// Helpers for planar bus buffers: channel c of a bus starts at `base + c * channelStride`.
public enum Bus {
    @_noLocks @inline(__always)
    public static func clear(_ base: UnsafeMutablePointer<Float>, channelStride: Int, channels: Int, from: Int, to: Int)
    {
        guard to > from else { return }
        for c in 0..<channels { (base + c * channelStride + from).update(repeating: 0, count: to - from) }
    }

    /// The largest magnitude in frames `from..<to` of every channel (0 for an empty region; NaN is passed over): the
    /// level meter's loop (`SampleRunLevels`, AVX2 where the processor has it), its sums of squares left unread.
    @_noLocks
    public static func peak(_ base: UnsafeMutablePointer<Float>, channelStride: Int, channels: Int, from: Int, to: Int)
        -> Float
    {
        guard to > from else { return 0 }
        var peak: Float = 0
        for c in 0..<channels {
            var square: Float = 0
            var top: Float = 0
            SampleRunLevels.measure(
                base + c * channelStride + from, channelStride: 0, channels: 1, count: to - from, squares: &square,
                peaks: &top)
            if top > peak { peak = top }
        }
        return peak
    }

    /// The loudest output that may leave a node or the graph: +24 dBFS. Beyond it is a burst, not music.
    public static let safePeak: Float = 15.848932

    /// True when every sample of the bus region is finite and within ±`safePeak` (x − x is 0 for finite x, NaN
    /// otherwise; comparisons against the bound run on whole vectors).
    @_noLocks
    public static func isSafe(_ base: UnsafeMutablePointer<Float>, channelStride: Int, channels: Int, frames: Int)
        -> Bool
    {
        var nonFinite = SIMD16<Float>()
        var loud = SIMDMask<SIMD16<Int32>>(repeating: false)
        let limit = SIMD16<Float>(repeating: safePeak)
        var tailNonFinite: Float = 0
        var tailLoud = false
        for c in 0..<channels {
            let p = base + c * channelStride
            var f = 0
            while f + 16 <= frames {
                let v = UnsafeRawPointer(p + f).loadUnaligned(as: SIMD16<Float>.self)
                nonFinite += v - v
                loud .|= (v .> limit) .| (v .< -limit)
                f += 16
            }
            while f < frames {
                tailNonFinite += p[f] - p[f]
                tailLoud = tailLoud || abs(p[f]) > safePeak
                f += 1
            }
        }
        return nonFinite.sum() + tailNonFinite == 0 && !any(loud) && !tailLoud
    }

    /// The same from a channel's measured levels (`SampleRunLevels`): a finite sum of squares (a NaN or infinity makes
    /// it non-finite) and a peak within ±`safePeak`.
    @_noLocks
    public static func isSafe(squares: Float, peak: Float) -> Bool {
        squares.isFinite && peak <= safePeak
    }
}
