import Glibc

/// Normalized coefficients of one second-order section (a0 = 1), transposed direct form II.
public struct BiquadCoefficients: Equatable, Sendable {
    public var b0: Double, b1: Double, b2: Double, a1: Double, a2: Double

    /// Creates a section from normalized coefficients (a0 = 1).
    public init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
        self.b0 = b0
        self.b1 = b1
        self.b2 = b2
        self.a1 = a1
        self.a2 = a2
    }

    /// The pass-through section (H(z) = 1).
    public static let identity = BiquadCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)

    /// Peaking (bell) section after the Audio EQ Cookbook: `gainDB` at `frequency`,
    /// `bandwidth` in octaves between the half-gain (dB) points, with the cookbook's
    /// bilinear-warping bandwidth correction. A gain of exactly 0 dB yields `identity`.
    public static func peaking(frequency: Double, gainDB: Double, bandwidth: Double, sampleRate: Double)
        -> BiquadCoefficients
    {
        if gainDB == 0 { return .identity }
        let w0 = 2 * Double.pi * frequency / sampleRate
        let sinW0 = sin(w0)
        let cosW0 = cos(w0)
        let a = pow(10, gainDB / 40)
        let alpha = sinW0 * sinh(0.5 * M_LN2 * bandwidth * w0 / sinW0)
        let norm = 1 / (1 + alpha / a)
        return BiquadCoefficients(
            b0: (1 + alpha * a) * norm,
            b1: -2 * cosW0 * norm,
            b2: (1 - alpha * a) * norm,
            a1: -2 * cosW0 * norm,
            a2: (1 - alpha / a) * norm)
    }

    /// Magnitude response in dB at `frequency` for `sampleRate`.
    public func magnitudeDB(at frequency: Double, sampleRate: Double) -> Double {
        let s = sin(Double.pi * frequency / sampleRate)
        return magnitudeDB(phi: s * s)
    }

    /// Magnitude in dB for phi = sin²(ω/2); this form stays accurate at low frequencies.
    @inline(__always)
    func magnitudeDB(phi: Double) -> Double {
        10 * log10(squaredMagnitude(phi: phi))
    }

    /// |H|² for phi = sin²(ω/2), floored to stay finite.
    @inline(__always)
    func squaredMagnitude(phi: Double) -> Double {
        let bs = b0 + b1 + b2
        let num = bs * bs - 4 * (b0 * b1 + 4 * b0 * b2 + b1 * b2) * phi + 16 * b0 * b2 * phi * phi
        let aSum = 1 + a1 + a2
        let den = aSum * aSum - 4 * (a1 + 4 * a2 + a1 * a2) * phi + 16 * a2 * phi * phi
        return max(num, 1e-300) / max(den, 1e-300)
    }
}
