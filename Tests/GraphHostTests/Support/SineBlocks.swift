import Foundation

/// Interleaved stereo cut into 10 ms blocks, each fitted with a sine of `frequency` (a whole number of periods a block)
/// per channel: blocks where a sample lies further than `noise` from the fit (noisy: a fade, a seam, a resampler's
/// ringing after a fade reaching into the next block), blocks that are the sine at its full level (whole: the fit's
/// amplitude within 1 % of the loudest block's, the block not noisy), and the largest sample outside the noisy blocks.
struct SineBlocks {
    var count = 0
    var noisy = 0
    var whole = 0
    /// The largest residual (RMS) of a block.
    var worst: Float = 0
    var cleanPeak: Float = 0
    /// How far a sample may lie from the fitted sine in a block that is not noisy.
    static let noise: Float = 1e-3

    init(_ samples: [Float], frequency: Double, rate: Int) {
        let frames = rate / 100
        let sine = (0..<frames).map { Float(sin(2 * Double.pi * frequency * Double($0) / Double(rate))) }
        let cosine = (0..<frames).map { Float(cos(2 * Double.pi * frequency * Double($0) / Double(rate))) }
        var amplitudes: [Float] = []
        for start in stride(from: 0, through: samples.count - 2 * frames, by: 2 * frames) {
            var residual: Float = 0
            var deviation: Float = 0
            var amplitude: Float = .infinity
            for channel in 0..<2 {
                var a: Float = 0
                var b: Float = 0
                for i in 0..<frames {
                    a += samples[start + 2 * i + channel] * sine[i]
                    b += samples[start + 2 * i + channel] * cosine[i]
                }
                a *= 2 / Float(frames)
                b *= 2 / Float(frames)
                var sum: Float = 0
                for i in 0..<frames {
                    let e = samples[start + 2 * i + channel] - a * sine[i] - b * cosine[i]
                    sum += e * e
                    deviation = max(deviation, abs(e))
                }
                residual = max(residual, (sum / Float(frames)).squareRoot())
                amplitude = min(amplitude, (a * a + b * b).squareRoot())
            }
            count += 1
            worst = max(worst, residual)
            if deviation > Self.noise {
                noisy += 1
            } else {
                cleanPeak = max(cleanPeak, samples[start..<(start + 2 * frames)].reduce(0) { max($0, abs($1)) })
            }
            amplitudes.append(deviation <= Self.noise ? amplitude : 0)
        }
        let level = amplitudes.max() ?? 0
        whole = amplitudes.filter { abs($0 - level) <= 0.01 * level }.count
    }
}
