/// Coefficients of the EQ in parallel form: y = d·x + Σ (c0 + c1·z⁻¹) / (1 + a1·z⁻¹ + a2·z⁻²),
/// one SIMD lane per section (unused lanes are zero). `gain` is already folded into `d`, `c0`, `c1`.
public struct ParallelEQCoefficients: Equatable {
    public var d: Float = 1
    public var c0 = SIMD16<Float>(), c1 = SIMD16<Float>(), a1 = SIMD16<Float>(), a2 = SIMD16<Float>()

    public init() {}

    /// Message layout: parameter = section count S, values = [d, c0×S, c1×S, a1×S, a2×S].
    public static let maxSections = 15

    public init(message: ControlMessage) {
        let s = Int(message.parameter)
        d = message.values[0]
        for k in 0..<min(s, Self.maxSections) {
            c0[k] = message.values[1 + k]
            c1[k] = message.values[1 + s + k]
            a1[k] = message.values[1 + 2 * s + k]
            a2[k] = message.values[1 + 3 * s + k]
        }
    }

    @_noLocks @inline(__always)
    static func interpolate(_ a: ParallelEQCoefficients, _ b: ParallelEQCoefficients, _ t: Float) -> ParallelEQCoefficients {
        var r = ParallelEQCoefficients()
        r.d = a.d + (b.d - a.d) * t
        r.c0 = a.c0 + (b.c0 - a.c0) * t
        r.c1 = a.c1 + (b.c1 - a.c1) * t
        r.a1 = a.a1 + (b.a1 - a.a1) * t
        r.a2 = a.a2 + (b.a2 - a.a2) * t
        return r
    }
}

/// The render side of the `ipod-eq` node: ten octave-band sections run side by side in SIMD lanes
/// (parallel form), so the cascade's recursion does not serialize the work.
/// A new coefficient set is reached by linear interpolation, updated every `segmentLength` samples.
public struct IPodEQKernel {
    public static let segmentLength = 16

    /// Two state vectors (s1, s2) per channel.
    public let state: UnsafeMutablePointer<SIMD16<Float>>
    public var current = ParallelEQCoefficients()
    var start = ParallelEQCoefficients()
    var target = ParallelEQCoefficients()
    let rampSegments: Int
    var segmentsDone = 0
    var segmentsLeft = 0
    var segmentPosition = 0

    public init(state: UnsafeMutablePointer<SIMD16<Float>>, coefficients: ParallelEQCoefficients, rampSamples: Int) {
        self.state = state
        self.current = coefficients
        self.rampSegments = max(1, rampSamples / Self.segmentLength)
    }

    @_noLocks
    public mutating func apply(_ message: ControlMessage) {
        start = current
        target = ParallelEQCoefficients(message: message)
        segmentsDone = 1
        segmentsLeft = rampSegments
        segmentPosition = 0
        current = .interpolate(start, target, 1 / Float(rampSegments))
    }

    @_noLocks
    public mutating func process(input: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>,
                                 channelStride: Int, channels: Int, frames: Int) {
        var done = 0
        while done < frames {
            var run = frames - done
            if segmentsLeft > 0 { run = min(run, Self.segmentLength - segmentPosition) }
            for c in 0..<channels {
                let offset = c * channelStride + done
                Self.filter(current, state: state + 2 * c, input: input + offset, output: output + offset, frames: run)
            }
            done += run
            if segmentsLeft > 0 {
                segmentPosition += run
                if segmentPosition == Self.segmentLength {
                    segmentPosition = 0
                    segmentsLeft -= 1
                    segmentsDone += 1
                    current = segmentsLeft == 0 ? target
                        : .interpolate(start, target, Float(segmentsDone) / Float(rampSegments))
                }
            }
        }
    }

    @_noLocks @inline(__always)
    static func filter(_ k: ParallelEQCoefficients, state: UnsafeMutablePointer<SIMD16<Float>>,
                       input: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>, frames: Int) {
        var s1 = state[0], s2 = state[1]
        let c0 = k.c0, c1 = k.c1, a1 = k.a1, a2 = k.a2, d = k.d
        for i in 0..<frames {
            let x = input[i]
            let xv = SIMD16<Float>(repeating: x)
            let y = c0 * xv + s1
            s1 = c1 * xv - a1 * y + s2
            s2 = -(a2 * y)
            output[i] = d * x + y.sum()
        }
        state[0] = s1
        state[1] = s2
    }
}
