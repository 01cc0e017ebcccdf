import Foundation

/// The click criteria of live control: inside a transition window, the largest second difference of the output
/// stays within 1.5x its steady-state value and no peak exceeds the larger of the two steady levels.
/// Steady states are measured 150–400 ms before and after the window. The level is the test tone's amplitude,
/// √2 × the RMS over one period (48 samples of the 1 kHz tone at 48 kHz) ending at each sample: exact for a steady
/// sine whatever its phase against the sample grid (sample peaks alone move by up to 0.2 % when a filter shifts
/// the phase).
enum ClickMeasure {
    struct Result: CustomStringConvertible {
        /// Largest second difference in the window over the larger steady one (must be ≤ 1.5).
        var slopeRatio: Double
        /// Peak in the window over the larger steady peak (must be ≤ 1, within coding noise).
        var peakRatio: Double
        var time: Double
        var description: String {
            String(format: "at %.3f s: second difference %.2fx steady, peak %.4fx steady", time, slopeRatio, peakRatio)
        }
    }

    static let period = 48

    static func stats(_ x: [Float], channels: Int, from: Int, to: Int) -> (slope: Double, peak: Double) {
        var slope: Float = 0
        var peak: Double = 0
        let first = max(period, from)
        let last = min(to, x.count / channels - 1)
        guard first < last else { return (0, 0) }
        for c in 0..<channels {
            var energy = 0.0
            for f in (first - period)..<first { energy += Double(x[f * channels + c] * x[f * channels + c]) }
            for f in first..<last {
                let i = f * channels + c
                slope = max(slope, abs(x[i + channels] - 2 * x[i] + x[i - channels]))
                let leaving = x[(f - period) * channels + c]
                energy += Double(x[i] * x[i]) - Double(leaving * leaving)
                peak = max(peak, (2 * max(0, energy) / Double(period)).squareRoot())
            }
        }
        return (Double(slope), peak)
    }

    /// The window [time, time + seconds] against the steady states around it.
    static func window(_ x: [Float], channels: Int, rate: Int, time: Double, seconds: Double) -> Result {
        func frame(_ t: Double) -> Int { Int(t * Double(rate)) }
        let before = stats(x, channels: channels, from: frame(time - 0.4), to: frame(time - 0.15))
        let after = stats(x, channels: channels, from: frame(time + seconds + 0.15), to: frame(time + seconds + 0.4))
        let inside = stats(x, channels: channels, from: frame(time), to: frame(time + seconds))
        return Result(
            slopeRatio: inside.slope / max(before.slope, after.slope, 1e-9),
            peakRatio: inside.peak / max(before.peak, after.peak, 1e-9), time: time)
    }

    /// The worst 10 ms window of a recording whose transitions fall at unknown times, from `start` to `end` seconds.
    static func worst(_ x: [Float], channels: Int, rate: Int, start: Double, end: Double) -> Result {
        var worst = Result(slopeRatio: 0, peakRatio: 0, time: start)
        var t = start
        while t < end {
            let r = window(x, channels: channels, rate: rate, time: t, seconds: 0.01)
            if r.slopeRatio > worst.slopeRatio {
                worst.slopeRatio = r.slopeRatio
                worst.time = t
            }
            worst.peakRatio = max(worst.peakRatio, r.peakRatio)
            t += 0.01
        }
        return worst
    }
}
