/// The sum of squares and the peak |x| of a run of samples, and the count of its clipped samples (|x| ≥ 1), the
/// level meter's inner loops. They work in SSE-sized vectors, eight samples a turn in two independent chains so
/// the adds and maxima do not all wait on one another. A NaN never raises the peak; it spoils the sum of squares (the
/// meter counts such a block as silence).
struct SampleRunLevels {
    var squares: Float
    var peak: Float

    @_noLocks
    init(_ p: UnsafePointer<Float>, count n: Int) {
        // Two chains of each; a maximum takes the chain first, so a NaN sample is skipped (one `maxps`). Trees of
        // maxima or of sums in the loop, or four chains, compile to far more instructions.
        var s0 = SIMD4<Float>()
        var s1 = SIMD4<Float>()
        var m0 = SIMD4<Float>()
        var m1 = SIMD4<Float>()
        var f = 0
        let last8 = n &- 8
        while f <= last8 {
            let v0 = Self.load(p + f)
            let v1 = Self.load(p + f + 4)
            m0 = Self.max(m0, Self.abs(v0))
            m1 = Self.max(m1, Self.abs(v1))
            s0 += v0 * v0
            s1 += v1 * v1
            f &+= 8
        }
        var squares = Self.sum(s0 + s1)
        var peak = Self.largest(m0, m1)
        while f < n {
            let a = Swift.abs(p[f])
            squares += a * a
            if a > peak { peak = a }
            f &+= 1
        }
        self.squares = squares
        self.peak = peak
    }

    /// The samples of the run with |x| ≥ 1 (an infinity is one, a NaN is not).
    @_noLocks
    static func clips(_ p: UnsafePointer<Float>, count n: Int) -> Int {
        let one = SIMD4<Float>(repeating: 1)
        var clips4 = SIMD4<Int32>()
        var f = 0
        while f &+ 4 <= n {
            clips4.replace(with: clips4 &+ 1, where: abs(load(p + f)) .>= one)
            f &+= 4
        }
        var clips = Int(clips4[0]) + Int(clips4[1]) + Int(clips4[2]) + Int(clips4[3])
        while f < n {
            if Swift.abs(p[f]) >= 1 { clips += 1 }
            f &+= 1
        }
        return clips
    }

    @_noLocks @inline(__always)
    static func load(_ p: UnsafePointer<Float>) -> SIMD4<Float> {
        UnsafeRawPointer(p).loadUnaligned(as: SIMD4<Float>.self)
    }

    /// |v| by clearing the sign bits (one `andps`).
    @_noLocks @inline(__always)
    static func abs(_ v: SIMD4<Float>) -> SIMD4<Float> {
        unsafeBitCast(unsafeBitCast(v, to: SIMD4<UInt32>.self) & 0x7fff_ffff, to: SIMD4<Float>.self)
    }

    /// The sum of the lanes.
    @_noLocks @inline(__always)
    static func sum(_ v: SIMD4<Float>) -> Float {
        let h = v + SIMD4(v[2], v[3], v[2], v[3])
        return h[0] + h[1]
    }

    /// The largest lane of `a` and `b`, which hold no NaN (in scalars: LLVM makes vector maxima that end in a
    /// scalar into masks and blends).
    @_noLocks @inline(__always)
    static func largest(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> Float {
        let x = Swift.max(Swift.max(a[0], a[1]), Swift.max(a[2], a[3]))
        let y = Swift.max(Swift.max(b[0], b[1]), Swift.max(b[2], b[3]))
        return Swift.max(x, y)
    }

    /// The lanewise larger of `m` and `a`, keeping `m` where `a` is NaN (one `maxps`).
    @_noLocks @inline(__always)
    static func max(_ m: SIMD4<Float>, _ a: SIMD4<Float>) -> SIMD4<Float> {
        m.replacing(with: a, where: a .> m)
    }
}
