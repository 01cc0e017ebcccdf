/// A cascade of second-order sections rewritten as a sum: H(z) = d + Σₖ (c0ₖ + c1ₖ·z⁻¹) / (1 + a1ₖ·z⁻¹ + a2ₖ·z⁻²).
/// The sections keep their positions; an identity section becomes an all-zero term.
public struct ParallelForm: Equatable, Sendable {
    public struct Term: Equatable, Sendable {
        public var c0: Double, c1: Double, a1: Double, a2: Double
        public static let zero = Term(c0: 0, c1: 0, a1: 0, a2: 0)
    }

    public var d: Double
    public var terms: [Term]

    /// Expands the cascade by residues: for each pole p of section k (other pole q),
    /// r = Πⱼ Bⱼ(p) / ((1 − q/p) · Πⱼ≠ₖ Aⱼ(p)); a pole pair becomes c0 = r₁ + r₂, c1 = −(r₁q + r₂p),
    /// and d = Π b0ⱼ − Σ r (the value at z⁻¹ = 0). Evaluating at the poles keeps double precision even for
    /// the clustered low-frequency poles, where expanding the polynomials would not.
    public init(cascade sections: [BiquadCoefficients]) {
        var terms = Array(repeating: Term.zero, count: sections.count)
        let active = sections.indices.filter { s in
            let c = sections[s]
            return !(c.b0 == 1 && c.b1 == 0 && c.b2 == 0 && c.a1 == 0 && c.a2 == 0)
        }
        var d = sections.reduce(1.0) { $0 * $1.b0 }
        func poles(_ c: BiquadCoefficients) -> (Complex, Complex) {
            let disc = c.a1 * c.a1 - 4 * c.a2
            let root = disc >= 0 ? Complex(disc.squareRoot(), 0) : Complex(0, (-disc).squareRoot())
            return ((Complex(-c.a1, 0) + root) * 0.5, (Complex(-c.a1, 0) - root) * 0.5)
        }
        func evaluate(_ c0: Double, _ c1: Double, _ c2: Double, at z: Complex) -> Complex {
            let w = z.reciprocal
            return Complex(c0, 0) + w * c1 + w * w * c2
        }
        for k in active {
            let (p, q) = poles(sections[k])
            func residue(_ p: Complex, other q: Complex) -> Complex {
                var r = (Complex(1, 0) - q * p.reciprocal).reciprocal
                for j in active {
                    let s = sections[j]
                    r = r * evaluate(s.b0, s.b1, s.b2, at: p)
                    if j != k { r = r * evaluate(1, s.a1, s.a2, at: p).reciprocal }
                }
                return r
            }
            let rp = residue(p, other: q)
            let rq = residue(q, other: p)
            let c0 = rp + rq
            let c1 = (rp * q + rq * p) * -1
            terms[k] = Term(c0: c0.re, c1: c1.re, a1: sections[k].a1, a2: sections[k].a2)
            d -= c0.re
        }
        self.d = d
        self.terms = terms
    }

    /// The coefficient message values for `IPodEQKernel`, scaled by the linear `gain`.
    public func messageValues(gain: Double) -> [Float] {
        var values = [Float(d * gain)]
        values += terms.map { Float($0.c0 * gain) }
        values += terms.map { Float($0.c1 * gain) }
        values += terms.map { Float($0.a1) }
        values += terms.map { Float($0.a2) }
        return values
    }
}

/// Minimal complex arithmetic for the residue computation.
struct Complex {
    var re: Double, im: Double
    init(_ re: Double, _ im: Double) {
        self.re = re
        self.im = im
    }
    static func + (a: Complex, b: Complex) -> Complex { Complex(a.re + b.re, a.im + b.im) }
    static func - (a: Complex, b: Complex) -> Complex { Complex(a.re - b.re, a.im - b.im) }
    static func * (a: Complex, b: Complex) -> Complex { Complex(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re) }
    static func * (a: Complex, s: Double) -> Complex { Complex(a.re * s, a.im * s) }
    var reciprocal: Complex {
        let m = re * re + im * im
        return Complex(re / m, -im / m)
    }
}
