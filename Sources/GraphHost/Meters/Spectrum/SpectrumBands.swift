import Glibc

/// The 1/6-octave bands a spectrum reads: centers 1000·2^(k/6) Hz from the one nearest 20 Hz (19.7 Hz) to the one
/// nearest 20 kHz (20.2 kHz), edges 1/12 octave either side of each center. A band whose upper edge lies above
/// Nyquist is left out, so 44.1 and 48 kHz both have the 61 bands and 32 kHz stops at 14.3 kHz.
public struct SpectrumBands: Sendable, Equatable {
    public static let perOctave = 6
    /// k of the lowest and highest band center, 1000·2^(k/6) Hz.
    public static let lowestIndex = index(nearest: 20)
    public static let highestIndex = index(nearest: 20_000)

    /// The centers, Hz, lowest first.
    public let centers: [Double]

    public init(sampleRate: Double) {
        centers = (Self.lowestIndex...Self.highestIndex).map(Self.center).filter {
            Self.upperEdge(of: $0) <= sampleRate / 2
        }
    }

    public static func center(_ k: Int) -> Double { 1000 * pow(2, Double(k) / Double(perOctave)) }
    public static func lowerEdge(of center: Double) -> Double { center * pow(2, -0.5 / Double(perOctave)) }
    public static func upperEdge(of center: Double) -> Double { center * pow(2, 0.5 / Double(perOctave)) }

    static func index(nearest frequency: Double) -> Int {
        Int((log2(frequency / 1000) * Double(perOctave)).rounded())
    }

    /// Each band's share of the bins of a real FFT of `size` at `sampleRate`: bin k stands for the frequencies within
    /// half a bin of k·sampleRate/size (clipped to 0 and Nyquist), and its weight in a band is the fraction of that
    /// span inside the band's edges, so a band narrower than a bin still gets the power of its own width.
    func binWeights(fftSize size: Int, sampleRate: Double) -> [(firstBin: Int, weights: [Double])] {
        let spacing = sampleRate / Double(size)
        let lastBin = size / 2
        return centers.map { center in
            let lower = Self.lowerEdge(of: center)
            let upper = Self.upperEdge(of: center)
            let first = max(0, Int((lower / spacing + 0.5).rounded(.down)))
            let last = min(lastBin, Int((upper / spacing + 0.5).rounded(.down)))
            let weights = (first...last).map { bin in
                let binLower = max(0, (Double(bin) - 0.5) * spacing)
                let binUpper = min(sampleRate / 2, (Double(bin) + 0.5) * spacing)
                return max(0, min(upper, binUpper) - max(lower, binLower)) / spacing
            }
            return (first, weights)
        }
    }
}
