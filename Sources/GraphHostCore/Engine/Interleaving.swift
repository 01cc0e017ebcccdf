/// Copies between interleaved frames and one buffer per channel. Stereo, nearly every graph, moves four frames at a
/// time in SIMD registers; other channel counts go sample by sample.
public enum Interleaving {
    /// Writes `frames` frames of a planar buffer (channel c at `base + c * channelStride`) interleaved to `out`.
    @_noLocks @inline(__always)
    public static func interleave(
        from base: UnsafePointer<Float>, channelStride: Int, channels: Int, frames: Int,
        into out: UnsafeMutablePointer<Float>
    ) {
        if channels == 2 { return interleaveStereo(base, base + channelStride, into: out, frames: frames) }
        for c in 0..<channels {
            let from = base + c * channelStride
            for f in 0..<frames { out[f * channels + c] = from[f] }
        }
    }

    /// Reads `frames` interleaved frames from `source` into a planar buffer (channel c at `base + c * channelStride`).
    @_noLocks @inline(__always)
    public static func deinterleave(
        from source: UnsafePointer<Float>, channels: Int, frames: Int,
        into base: UnsafeMutablePointer<Float>, channelStride: Int
    ) {
        if channels == 2 { return deinterleaveStereo(source, into: base, base + channelStride, frames: frames) }
        for c in 0..<channels {
            let to = base + c * channelStride
            for f in 0..<frames { to[f] = source[f * channels + c] }
        }
    }

    /// Two channels' buffers interleaved to `out`.
    @_noLocks @inline(__always)
    public static func interleaveStereo(
        _ left: UnsafePointer<Float>, _ right: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>,
        frames: Int
    ) {
        var f = 0
        while f + 4 <= frames {
            let l = UnsafeRawPointer(left + f).loadUnaligned(as: SIMD4<Float>.self)
            let r = UnsafeRawPointer(right + f).loadUnaligned(as: SIMD4<Float>.self)
            let to = UnsafeMutableRawPointer(out + 2 * f)
            to.storeBytes(of: SIMD4(l[0], r[0], l[1], r[1]), as: SIMD4<Float>.self)
            to.storeBytes(of: SIMD4(l[2], r[2], l[3], r[3]), toByteOffset: 16, as: SIMD4<Float>.self)
            f += 4
        }
        while f < frames {
            out[2 * f] = left[f]
            out[2 * f + 1] = right[f]
            f += 1
        }
    }

    @_noLocks @inline(__always)
    static func deinterleaveStereo(
        _ source: UnsafePointer<Float>, into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>,
        frames: Int
    ) {
        var f = 0
        while f + 4 <= frames {
            let from = UnsafeRawPointer(source + 2 * f)
            let a = from.loadUnaligned(as: SIMD4<Float>.self)
            let b = from.loadUnaligned(fromByteOffset: 16, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(left + f).storeBytes(of: SIMD4(a[0], a[2], b[0], b[2]), as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(right + f).storeBytes(of: SIMD4(a[1], a[3], b[1], b[3]), as: SIMD4<Float>.self)
            f += 4
        }
        while f < frames {
            left[f] = source[2 * f]
            right[f] = source[2 * f + 1]
            f += 1
        }
    }
}
