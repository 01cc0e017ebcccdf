import CMeterGlue

/// The sums of squares and the peaks |x| of a run of samples in each channel of a bus, and the count of a run's
/// clipped samples (|x| ≥ 1): the level meter's inner loops. The first two come from C (`gh_meter_run_levels`: AVX2
/// where the processor has it, which Swift cannot ask for one function, two channels a turn). A NaN never raises the
/// peak; it spoils the sum of squares (the meter counts such a block as silence).
enum SampleRunLevels {
    /// Writes channel c's sum of squares and peak of `count` frames (channel c at `bus + c * channelStride`) to
    /// `squares[c]` and `peaks[c]`.
    @_noLocks
    static func measure(
        _ bus: UnsafePointer<Float>, channelStride: Int, channels: Int, count n: Int,
        squares: UnsafeMutablePointer<Float>, peaks: UnsafeMutablePointer<Float>
    ) {
        // meter_glue.c: arithmetic on the samples only, no allocation, lock or call out.
        _unsafePerformance { gh_meter_run_levels(bus, channelStride, channels, n, squares, peaks) }
    }

    /// `destination[f] += source[f] * gain` for `count` samples, as the mixer sums them, adding the result's sum of
    /// squares and peak to `*squares` and `*peak`.
    @_noLocks
    static func scaleAdd(
        _ destination: UnsafeMutablePointer<Float>, _ source: UnsafePointer<Float>, gain: Float, count: Int,
        squares: UnsafeMutablePointer<Float>, peak: UnsafeMutablePointer<Float>
    ) {
        // meter_glue.c: arithmetic on the samples only, no allocation, lock or call out.
        _unsafePerformance { gh_meter_scale_add(destination, source, gain, count, squares, peak) }
    }

    /// Copies `frames` interleaved stereo frames into `left` and `right`, adding each channel's sum of squares and
    /// peak to `levels`.
    @_noLocks
    static func deinterleaveStereo(
        _ source: UnsafePointer<Float>, into left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>,
        frames: Int, levels: LevelMeter.RunLevels
    ) {
        // meter_glue.c: arithmetic on the samples only, no allocation, lock or call out.
        _unsafePerformance {
            gh_meter_deinterleave_stereo(source, left, right, frames, levels.squares, levels.peaks)
        }
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
}
