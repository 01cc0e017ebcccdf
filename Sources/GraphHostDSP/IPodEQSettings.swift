import Glibc

/// The EQ's user-facing state and the coefficients it implies.
public struct IPodEQSettings: Equatable {
    public var gains: [Double]
    public var preamp: Double

    public init(gains: [Double], preamp: Double) {
        self.gains = gains
        self.preamp = preamp
    }

    public func sections(sampleRate: Int) -> [BiquadCoefficients] {
        GraphicEQDesign.sections(gains: gains, sampleRate: Double(sampleRate))
    }

    /// −max(0, peak gain of the curve): the automatic headroom in dB (the preamp is applied on top).
    public func headroomDB(sampleRate: Int) -> Double {
        -max(0, GraphicEQDesign.peakGain(sections(sampleRate: sampleRate), sampleRate: Double(sampleRate)))
    }

    /// Coefficient message values for `IPodEQKernel`.
    public func kernelValues(sampleRate: Int) -> [Float] {
        let sections = sections(sampleRate: sampleRate)
        let headroom = -max(0, GraphicEQDesign.peakGain(sections, sampleRate: Double(sampleRate)))
        let gain = pow(10, (headroom + preamp) / 20)
        return ParallelForm(cascade: sections).messageValues(gain: gain)
    }
}
