import Glibc

/// Designs the cascade that realises ten octave-band slider gains accurately.
///
/// One peaking section per band (Audio EQ Cookbook bell, 1.2 octave bandwidth with
/// bilinear-warping correction, centred on the band). The section gains are not the
/// slider gains: they are solved by weighted nonlinear least squares (Gauss-Newton on
/// the exact digital dB response, a 10×10 normal-equation solve per step) so that the
/// cascade meets the target curve at the ten band centres (weight 2) and at the two
/// 1/3-octave points between neighbouring centres (weight 1). Working on the exact
/// digital response also absorbs the band interaction and the Nyquist cramping of the
/// 16 kHz band.
public enum GraphicEQDesign {
    /// Number of bands (and of sections returned by `sections`).
    public static let bandCount = 10

    /// Bandwidth of every peaking section in octaves (between its half-gain points).
    static let bandwidth = 1.2
    /// Least-squares weight of the band-centre points relative to the in-between points.
    static let centerWeight = 2.0
    /// Gauss-Newton steps; the fit converges in two for gains within ±12 dB.
    static let iterations = 4
    /// Step for the finite-difference Jacobian, dB.
    static let jacobianStep = 1e-3
    /// Bound on a section's solved gain, dB.
    static let maxSectionGain = 40.0
    /// Bands centred above this fraction of the sample rate get an identity section.
    static let maxCenterFraction = 0.4
    /// Fit points above this fraction of the sample rate are ignored.
    static let maxFitFraction = 0.475

    /// The sections (cascade order) for slider gains `gains` (10 values, dB) at `sampleRate`.
    /// Missing gains count as 0 dB, extra ones are ignored, non-finite ones count as 0 dB.
    /// Always returns `bandCount` sections (inactive bands are `identity`).
    public static func sections(gains: [Double], sampleRate: Double) -> [BiquadCoefficients] {
        let sliders = normalized(gains)
        let centers = IPodEQPreset.bandCenters
        guard sampleRate.isFinite, sampleRate > 0 else {
            return Array(repeating: .identity, count: bandCount)
        }
        let active = centers.map { $0 <= maxCenterFraction * sampleRate }

        // Fit grid: centres plus 2^(1/3) and 2^(2/3) times each centre below the next one.
        var phis: [Double] = []
        var targets: [Double] = []
        var weights: [Double] = []
        phis.reserveCapacity(3 * bandCount)
        for k in 0..<bandCount {
            let steps = k < bandCount - 1 ? [0.0, 1.0 / 3.0, 2.0 / 3.0] : [0.0]
            for step in steps {
                let f = centers[k] * pow(2, step)
                guard f <= maxFitFraction * sampleRate else { continue }
                let s = sin(Double.pi * f / sampleRate)
                phis.append(s * s)
                targets.append(target(gains: sliders, at: f))
                weights.append(step == 0 ? centerWeight : 1)
            }
        }
        let pointCount = phis.count
        if pointCount == 0 || !active.contains(true) {
            return Array(repeating: .identity, count: bandCount)
        }

        func section(_ k: Int, _ gain: Double) -> BiquadCoefficients {
            active[k]
                ? .peaking(frequency: centers[k], gainDB: gain, bandwidth: bandwidth, sampleRate: sampleRate)
                : .identity
        }

        var g = sliders.enumerated().map { active[$0.offset] ? $0.element : 0 }
        var base = [Double](repeating: 0, count: bandCount * pointCount)
        var slope = [Double](repeating: 0, count: bandCount * pointCount)
        var residual = [Double](repeating: 0, count: pointCount)
        var matrix = [Double](repeating: 0, count: bandCount * bandCount)
        var rhs = [Double](repeating: 0, count: bandCount)

        for _ in 0..<iterations {
            for k in 0..<bandCount where active[k] {
                let s0 = section(k, g[k])
                let s1 = section(k, g[k] + jacobianStep)
                for p in 0..<pointCount {
                    let r0 = s0.magnitudeDB(phi: phis[p])
                    base[k * pointCount + p] = r0
                    slope[k * pointCount + p] = (s1.magnitudeDB(phi: phis[p]) - r0) / jacobianStep
                }
            }
            for p in 0..<pointCount {
                var sum = 0.0
                for k in 0..<bandCount where active[k] { sum += base[k * pointCount + p] }
                residual[p] = targets[p] - sum
            }
            // Normal equations of the weighted linearised problem.
            for i in 0..<bandCount {
                for j in i..<bandCount {
                    var acc = 0.0
                    if active[i] && active[j] {
                        for p in 0..<pointCount {
                            let w = weights[p]
                            acc += w * w * slope[i * pointCount + p] * slope[j * pointCount + p]
                        }
                    }
                    matrix[i * bandCount + j] = acc
                    matrix[j * bandCount + i] = acc
                }
                var acc = 0.0
                if active[i] {
                    for p in 0..<pointCount {
                        let w = weights[p]
                        acc += w * w * slope[i * pointCount + p] * residual[p]
                    }
                }
                rhs[i] = acc
            }
            var trace = 0.0
            for i in 0..<bandCount { trace += matrix[i * bandCount + i] }
            let ridge = 1e-10 * trace / Double(bandCount) + 1e-12
            for i in 0..<bandCount {
                matrix[i * bandCount + i] = active[i] ? matrix[i * bandCount + i] + ridge : 1
                if !active[i] { rhs[i] = 0 }
            }
            guard let step = solve(matrix, rhs, size: bandCount) else { break }
            var largest = 0.0
            for k in 0..<bandCount where active[k] {
                let next = min(max(g[k] + step[k], -maxSectionGain), maxSectionGain)
                largest = max(largest, abs(next - g[k]))
                g[k] = next
            }
            if largest < 1e-9 { break }
        }
        return (0..<bandCount).map { section($0, g[$0]) }
    }

    /// The target curve in dB at `frequency`: slider gains interpolated linearly over log2 frequency, held constant
    /// outside 32..16k.
    public static func target(gains: [Double], at frequency: Double) -> Double {
        let sliders = normalized(gains)
        let centers = IPodEQPreset.bandCenters
        guard frequency > centers[0] else { return sliders[0] }
        guard frequency < centers[bandCount - 1] else { return sliders[bandCount - 1] }
        var k = 0
        while frequency > centers[k + 1] { k += 1 }
        let t = log2(frequency / centers[k]) / log2(centers[k + 1] / centers[k])
        return sliders[k] + t * (sliders[k + 1] - sliders[k])
    }

    /// Sum of section responses in dB.
    public static func response(_ sections: [BiquadCoefficients], at frequency: Double, sampleRate: Double) -> Double {
        let s = sin(Double.pi * frequency / sampleRate)
        let phi = s * s
        var squared = 1.0
        for section in sections { squared *= section.squaredMagnitude(phi: phi) }
        return 10 * log10(max(squared, 1e-300))
    }

    /// Largest gain (dB) of the cascade between 20 Hz and min(20 kHz, 0.95 * Nyquist) on a dense log grid (≥ 1/48
    /// octave); used for automatic headroom = -max(0, peakGain). The grid has 96 points per octave and includes both
    /// ends.
    public static func peakGain(_ sections: [BiquadCoefficients], sampleRate: Double) -> Double {
        let low = 20.0
        let high = min(20_000, 0.95 * 0.5 * sampleRate)
        guard high > low else { return response(sections, at: max(high, 0), sampleRate: sampleRate) }
        let count = max(1, Int((log2(high / low) * 96).rounded(.up)))
        let ratio = log2(high / low) / Double(count)
        var peak = -Double.infinity
        for i in 0...count {
            let f = i == count ? high : low * pow(2, Double(i) * ratio)
            peak = max(peak, response(sections, at: f, sampleRate: sampleRate))
        }
        return peak
    }

    /// Ten finite slider gains: missing or non-finite values become 0 dB.
    private static func normalized(_ gains: [Double]) -> [Double] {
        (0..<bandCount).map { $0 < gains.count && gains[$0].isFinite ? gains[$0] : 0 }
    }

    /// Solves the dense `size`×`size` system (row-major) by Gaussian elimination with partial pivoting.
    private static func solve(_ matrix: [Double], _ rhs: [Double], size n: Int) -> [Double]? {
        var a = matrix
        var b = rhs
        for col in 0..<n {
            var pivot = col
            for row in (col + 1)..<n where abs(a[row * n + col]) > abs(a[pivot * n + col]) { pivot = row }
            let p = a[pivot * n + col]
            guard p.isFinite, abs(p) > 1e-300 else { return nil }
            if pivot != col {
                for j in 0..<n { a.swapAt(col * n + j, pivot * n + j) }
                b.swapAt(col, pivot)
            }
            for row in (col + 1)..<n {
                let factor = a[row * n + col] / p
                if factor == 0 { continue }
                for j in col..<n { a[row * n + j] -= factor * a[col * n + j] }
                b[row] -= factor * b[col]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var acc = b[row]
            for j in (row + 1)..<n { acc -= a[row * n + j] * x[j] }
            x[row] = acc / a[row * n + row]
        }
        return x.allSatisfy(\.isFinite) ? x : nil
    }
}
