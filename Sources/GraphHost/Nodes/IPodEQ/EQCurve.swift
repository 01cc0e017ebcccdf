import FoundationEssentials
import Glibc

/// Measures the EQ kernel itself: its impulse response and that response's magnitude at chosen frequencies.
public enum EQKernelResponse {
    /// The impulse responses of an `IPodEQKernel` running `coefficients` on `channels` channels
    /// (two channels take the paired stereo path, one the single-channel path).
    public static func impulseResponses(_ coefficients: ParallelEQCoefficients, length: Int, channels: Int = 2)
        -> [[Float]]
    {
        let state = UnsafeMutablePointer<SIMD16<Float>>.allocate(capacity: IPodEQKernel.stateVectors * channels)
        state.initialize(repeating: SIMD16<Float>(), count: IPodEQKernel.stateVectors * channels)
        defer { state.deallocate() }
        var kernel = IPodEQKernel(state: state, coefficients: coefficients, rampSamples: 0)
        var input = [Float](repeating: 0, count: length * channels)
        for c in 0..<channels { input[c * length] = 1 }
        var output = [Float](repeating: 0, count: length * channels)
        input.withUnsafeMutableBufferPointer { i in
            output.withUnsafeMutableBufferPointer { o in
                kernel.process(
                    input: i.baseAddress!, output: o.baseAddress!, channelStride: length, channels: channels,
                    frames: length)
            }
        }
        return (0..<channels).map { Array(output[($0 * length)..<(($0 + 1) * length)]) }
    }

    /// The impulse response of the first channel of a stereo kernel.
    public static func impulseResponse(_ coefficients: ParallelEQCoefficients, length: Int) -> [Float] {
        impulseResponses(coefficients, length: length)[0]
    }

    /// |DFT| of `signal` at `frequency`, in dB (double-precision direct evaluation).
    public static func magnitudeDB(_ signal: [Float], at frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        var re = 0.0
        var im = 0.0
        // Rotate a phasor instead of calling cos/sin per sample; renormalize to stop drift.
        var c = 1.0
        var s = 0.0
        let cw = cos(w)
        let sw = sin(w)
        for (n, x) in signal.enumerated() {
            re += Double(x) * c
            im -= Double(x) * s
            (c, s) = (c * cw - s * sw, s * cw + c * sw)
            if n & 1023 == 1023 {
                let r = (c * c + s * s).squareRoot()
                c /= r
                s /= r
            }
        }
        return 10 * log10(max(re * re + im * im, 1e-30))
    }
}

/// The target and the achieved response of one preset, for `graphhost eq-curve`.
public struct EQCurve {
    public var preset: IPodEQPreset
    public var sampleRate: Int
    public var headroomDB: Double
    /// (frequency, target dB, achieved dB with the headroom removed).
    public var points: [(frequency: Double, target: Double, achieved: Double)]

    public init(preset: IPodEQPreset, sampleRate: Int) {
        self.preset = preset
        self.sampleRate = sampleRate
        let settings = IPodEQSettings(gains: preset.gains, preamp: 0)
        headroomDB = settings.headroomDB(sampleRate: sampleRate)
        let ir = EQKernelResponse.impulseResponse(settings.coefficients(sampleRate: sampleRate), length: 1 << 16)
        var points: [(Double, Double, Double)] = []
        var f = 20.0
        while f <= min(20000, 0.475 * Double(sampleRate)) {
            let achieved = EQKernelResponse.magnitudeDB(ir, at: f, sampleRate: Double(sampleRate)) - headroomDB
            points.append((f, GraphicEQDesign.target(gains: preset.gains, at: f), achieved))
            f *= pow(2, 1.0 / 24)
        }
        self.points = points
    }

    public var csv: String {
        var out = "frequency_hz,target_db,achieved_db,output_db\n"
        for p in points {
            out += Format.printf("%.2f,%.3f,%.3f,%.3f\n", p.frequency, p.target, p.achieved, p.achieved + headroomDB)
        }
        return out
    }

    /// The target and achieved curves as an SVG chart over ±12 dB.
    public func svg() -> String {
        let title = "\(preset.name) at \(sampleRate) Hz (headroom \(Format.printf("%.1f", headroomDB)) dB, not shown)"
        let curves = [
            ResponsePlot.Curve(label: "target", color: "#285ac8", points: points.map { ($0.frequency, $0.target) }),
            ResponsePlot.Curve(label: "achieved", color: "#dc3c28", points: points.map { ($0.frequency, $0.achieved) }),
        ]
        return ResponsePlot(title: title, curves: curves, dBRange: -12...12).svg()
    }
}
