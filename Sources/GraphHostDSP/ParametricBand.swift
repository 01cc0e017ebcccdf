import Glibc

/// One band of a parametric EQ: a filter shape at a frequency, with a gain (peaking and shelves) and a Q. Its
/// coefficients are the Audio EQ Cookbook's (Robert Bristow-Johnson), with Q as the quality factor of every shape
/// (for shelves, the cookbook's "Q" form of the shelf slope).
public struct ParametricBand: Equatable, Sendable {
    /// The filter shapes, with the names graph files use.
    public enum Shape: String, CaseIterable, Sendable {
        case peaking
        case lowShelf = "low-shelf"
        case highShelf = "high-shelf"
        case lowPass = "low-pass"
        case highPass = "high-pass"
        case bandPass = "band-pass"
        case notch

        /// Whether the shape has a gain (the others ignore it).
        public var hasGain: Bool { self == .peaking || self == .lowShelf || self == .highShelf }
    }

    public var shape: Shape
    /// Centre, corner or shelf midpoint frequency in Hz.
    public var frequency: Double
    /// Gain in dB at the centre (peaking) or of the shelf.
    public var gain: Double
    public var q: Double

    public init(shape: Shape, frequency: Double, gain: Double = 0, q: Double = 0.7071067811865476) {
        self.shape = shape
        self.frequency = frequency
        self.gain = gain
        self.q = q
    }

    /// The cookbook section for `sampleRate`, normalized so a0 = 1.
    public func coefficients(sampleRate: Double) -> BiquadCoefficients {
        let w0 = 2 * Double.pi * frequency / sampleRate
        let cosW0 = cos(w0)
        let alpha = sin(w0) / (2 * q)
        let a = pow(10, gain / 40)
        let rootA = a.squareRoot()
        let b0: Double
        let b1: Double
        let b2: Double
        let a0: Double
        let a1: Double
        let a2: Double
        switch shape {
        case .peaking:
            (b0, b1, b2) = (1 + alpha * a, -2 * cosW0, 1 - alpha * a)
            (a0, a1, a2) = (1 + alpha / a, -2 * cosW0, 1 - alpha / a)
        case .lowShelf:
            b0 = a * ((a + 1) - (a - 1) * cosW0 + 2 * rootA * alpha)
            b1 = 2 * a * ((a - 1) - (a + 1) * cosW0)
            b2 = a * ((a + 1) - (a - 1) * cosW0 - 2 * rootA * alpha)
            a0 = (a + 1) + (a - 1) * cosW0 + 2 * rootA * alpha
            a1 = -2 * ((a - 1) + (a + 1) * cosW0)
            a2 = (a + 1) + (a - 1) * cosW0 - 2 * rootA * alpha
        case .highShelf:
            b0 = a * ((a + 1) + (a - 1) * cosW0 + 2 * rootA * alpha)
            b1 = -2 * a * ((a - 1) + (a + 1) * cosW0)
            b2 = a * ((a + 1) + (a - 1) * cosW0 - 2 * rootA * alpha)
            a0 = (a + 1) - (a - 1) * cosW0 + 2 * rootA * alpha
            a1 = 2 * ((a - 1) - (a + 1) * cosW0)
            a2 = (a + 1) - (a - 1) * cosW0 - 2 * rootA * alpha
        case .lowPass:
            (b0, b1, b2) = ((1 - cosW0) / 2, 1 - cosW0, (1 - cosW0) / 2)
            (a0, a1, a2) = (1 + alpha, -2 * cosW0, 1 - alpha)
        case .highPass:
            (b0, b1, b2) = ((1 + cosW0) / 2, -(1 + cosW0), (1 + cosW0) / 2)
            (a0, a1, a2) = (1 + alpha, -2 * cosW0, 1 - alpha)
        case .bandPass:
            (b0, b1, b2) = (alpha, 0, -alpha)
            (a0, a1, a2) = (1 + alpha, -2 * cosW0, 1 - alpha)
        case .notch:
            (b0, b1, b2) = (1, -2 * cosW0, 1)
            (a0, a1, a2) = (1 + alpha, -2 * cosW0, 1 - alpha)
        }
        return BiquadCoefficients(b0: b0 / a0, b1: b1 / a0, b2: b2 / a0, a1: a1 / a0, a2: a2 / a0)
    }
}

extension BiquadCoefficients {
    /// Frames until the section's impulse response has decayed by `decibels` (from its poles' radius): how long a
    /// section started from rest needs before its output is the steady one.
    public func settleFrames(decibels: Double = 80) -> Int {
        // Complex poles have radius √a2; real ones are the roots of z² + a1 z + a2.
        let discriminant = a1 * a1 - 4 * a2
        let radius = discriminant < 0 ? a2.squareRoot() : (abs(a1) + discriminant.squareRoot()) / 2
        guard radius > 0 else { return 2 }
        guard radius < 1 else { return Int.max }
        return Int((-decibels / 20 * M_LN10 / log(radius)).rounded(.up)) + 2
    }
}
