import Foundation

/// Levels and pitches of test tones in rendered or recorded output.
enum ToneMeasure {
    /// The amplitude of the `frequency` component of `channel` of interleaved stereo at 48 kHz, over `seconds` from
    /// `start` (whole periods of the test tones).
    static func amplitude(
        _ stereo: [Float], _ frequency: Double, channel: Int = 0, start: Double = 1, seconds: Double = 1,
        rate: Double = 48000
    ) -> Double {
        var re = 0.0
        var im = 0.0
        let from = Int(start * rate)
        let count = Int(seconds * rate)
        for n in 0..<count {
            let phase = 2 * Double.pi * frequency * Double(n) / rate
            re += Double(stereo[2 * (from + n) + channel]) * cos(phase)
            im += Double(stereo[2 * (from + n) + channel]) * sin(phase)
        }
        return 2 * (re * re + im * im).squareRoot() / Double(count)
    }

    /// The median of the 0.2 s windows' levels at `frequency` from `from` to `to` seconds, in dB: a recording's one
    /// slip (a dropout spreads over every frequency of the window holding it) does not decide it.
    static func medianLevel(_ stereo: [Float], _ frequency: Double, from: Double, to: Double) -> Double {
        let levels = stride(from: from, through: to - 0.2, by: 0.2).map {
            dB(amplitude(stereo, frequency, start: $0, seconds: 0.2))
        }.sorted()
        return levels.isEmpty ? -240 : levels[levels.count / 2]
    }

    static func dB(_ x: Double) -> Double { 20 * log10(max(x, 1e-12)) }

    /// The strongest period (in frames) of a mono signal between `shortest` and `longest`, by autocorrelation.
    static func period(_ x: ArraySlice<Float>, shortest: Int, longest: Int) -> Int {
        let x = Array(x)
        return (shortest...longest).max { a, b in
            zip(x, x.dropFirst(a)).reduce(0) { $0 + $1.0 * $1.1 }
                < zip(x, x.dropFirst(b)).reduce(0) { $0 + $1.0 * $1.1 }
        }!
    }
}
