/// Coefficients of the EQ in parallel form: y = d·x + Σ (c0 + c1·z⁻¹) / (1 + a1·z⁻¹ + a2·z⁻²),
/// one SIMD lane per section (unused lanes are zero). `gain` is already folded into `d`, `c0`, `c1`.
public struct ParallelEQCoefficients: Equatable {
    public var d: Float = 1
    public var c0 = SIMD16<Float>(), c1 = SIMD16<Float>(), a1 = SIMD16<Float>(), a2 = SIMD16<Float>()

    public init() {}

    /// The stereo kernel packs ten sections of two channels into five 4-lane vectors, hence ten at most.
    public static let maxSections = 10

    /// From `ParallelForm.messageValues` of S sections: [d, c0×S, c1×S, a1×S, a2×S].
    public init(sections s: Int, values: [Float]) {
        precondition(values.count == 1 + 4 * s && s <= Self.maxSections)
        d = values[0]
        for k in 0..<s {
            c0[k] = values[1 + k]
            c1[k] = values[1 + s + k]
            a1[k] = values[1 + 2 * s + k]
            a2[k] = values[1 + 3 * s + k]
        }
    }
}
