import CEbur128
import Glibc

/// Loudness by EBU R128 (ITU-R BS.1770) through libebur128: momentary (400 ms), short-term (3 s) and integrated
/// loudness in LUFS and the true peak in dBTP, over everything added since it was made or reset; the loudness range
/// in LU from the short-term loudness every 100 ms once 3 s are in (`LoudnessRange`; libebur128's own takes it once a
/// second, which reads steps up to 0.3 LU apart from ffmpeg). Channels weigh as libebur128 orders them (L, R, C, LFE
/// unused, Ls, Rs). Silence reads -infinity, never NaN. One thread at a time (`AudioAnalysis` holds its lock).
public final class LoudnessMeter: AnalysisConsumer {
    public let channels: Int
    public let sampleRate: Int
    /// Integrated loudness from a histogram (constant memory, 0.1 LU bins) instead of every block.
    public let bounded: Bool
    private var state: UnsafeMutablePointer<ebur128_state>
    private var loudnessRange = LoudnessRange()
    /// Frames added since the last reset.
    private var frames = 0
    private let framesPer100ms: Int

    /// A meter of `channels` channels at `sampleRate` Hz; `bounded` for runs of unbounded length (live).
    public init(channels: Int, sampleRate: Int, bounded: Bool = false) {
        self.channels = channels
        self.sampleRate = sampleRate
        self.bounded = bounded
        framesPer100ms = sampleRate / 10
        state = Self.makeState(channels: channels, sampleRate: sampleRate, bounded: bounded)
    }

    deinit { Self.destroy(state) }

    private static func destroy(_ state: UnsafeMutablePointer<ebur128_state>) {
        var handle: UnsafeMutablePointer<ebur128_state>? = state
        ebur128_destroy(&handle)
    }

    private static func makeState(channels: Int, sampleRate: Int, bounded: Bool)
        -> UnsafeMutablePointer<ebur128_state>
    {
        var mode = EBUR128_MODE_M.rawValue | EBUR128_MODE_S.rawValue | EBUR128_MODE_I.rawValue
        mode |= EBUR128_MODE_TRUE_PEAK.rawValue
        if bounded { mode |= EBUR128_MODE_HISTOGRAM.rawValue }
        guard let state = ebur128_init(UInt32(channels), UInt(sampleRate), Int32(mode)) else {
            fatalError("libebur128 could not allocate a state for \(channels) channels at \(sampleRate) Hz")
        }
        return state
    }

    public func add(interleaved samples: UnsafePointer<Float>, frames: Int, channels: Int) {
        precondition(channels == self.channels, "a \(self.channels)-channel loudness meter got \(channels) channels")
        var done = 0
        while done < frames {
            let n = min(frames - done, framesPer100ms - self.frames % framesPer100ms)
            ebur128_add_frames_float(state, samples + done * channels, n)
            done += n
            self.frames += n
            if self.frames % framesPer100ms == 0 && self.frames >= 30 * framesPer100ms {
                loudnessRange.add(shortTerm)
            }
        }
    }

    public func reset() {
        Self.destroy(state)
        state = Self.makeState(channels: channels, sampleRate: sampleRate, bounded: bounded)
        loudnessRange = LoudnessRange()
        frames = 0
    }

    /// Loudness of the last 400 ms, LUFS.
    public var momentary: Double { read { ebur128_loudness_momentary(state, $0) } }
    /// Loudness of the last 3 s, LUFS.
    public var shortTerm: Double { read { ebur128_loudness_shortterm(state, $0) } }
    /// Gated loudness of everything added, LUFS.
    public var integrated: Double { read { ebur128_loudness_global(state, $0) } }
    /// Loudness range (LRA), LU; 0 until there is enough to tell.
    public var range: Double { loudnessRange.range }
    /// The largest true peak of any channel (4× oversampled below 96 kHz), dBTP.
    public var truePeak: Double {
        var peak = 0.0
        for c in 0..<channels {
            var value = 0.0
            if ebur128_true_peak(state, UInt32(c), &value) == Int32(EBUR128_SUCCESS.rawValue), value.isFinite {
                peak = max(peak, value)
            }
        }
        return peak > 0 ? 20 * log10(peak) : -.infinity
    }

    /// A figure from libebur128, with silence (its -HUGE_VAL), NaN or an error as -infinity.
    private func read(_ call: (UnsafeMutablePointer<Double>) -> Int32) -> Double {
        var value = -Double.infinity
        guard call(&value) == Int32(EBUR128_SUCCESS.rawValue), value.isFinite else { return -.infinity }
        return value
    }
}
