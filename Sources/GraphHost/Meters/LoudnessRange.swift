import Glibc

/// Loudness range (LRA) by EBU Tech 3342 from short-term loudness taken every 100 ms: a histogram of 0.01 LU bins
/// from -70 to +10 LUFS (constant memory), gated at -70 LUFS and 20 LU below the gated mean, then the spread between
/// the 10th and 95th percentiles, as ffmpeg's `ebur128` filter computes it.
struct LoudnessRange {
    static let lowest = -70.0
    static let highest = 10.0
    static let binsPerLU = 100.0
    private var counts = [Int](repeating: 0, count: Int((highest - lowest) * binsPerLU) + 1)
    private var total = 0

    /// Adds one short-term loudness, LUFS (below -70 LUFS it is gated out).
    mutating func add(_ shortTerm: Double) {
        guard shortTerm.isFinite, shortTerm >= Self.lowest else { return }
        let bin = Int(((min(shortTerm, Self.highest) - Self.lowest) * Self.binsPerLU).rounded())
        counts[bin] += 1
        total += 1
    }

    static func loudness(ofBin bin: Int) -> Double { lowest + Double(bin) / binsPerLU }

    /// The range in LU; 0 while nothing passed the gates.
    var range: Double {
        guard total > 0 else { return 0 }
        var power = 0.0
        for (bin, count) in counts.enumerated() where count > 0 {
            power += Double(count) * pow(10, Self.loudness(ofBin: bin) / 10)
        }
        let threshold = 10 * log10(power / Double(total)) - 20
        let first = max(0, Int(((threshold - Self.lowest) * Self.binsPerLU).rounded(.up)))
        guard first < counts.count else { return 0 }
        let kept = counts[first...].reduce(0, +)
        guard kept > 0 else { return 0 }
        var low = Self.loudness(ofBin: first)
        var seen = 0
        let lowCount = Int(0.10 * Double(kept) + 0.5)
        for bin in first..<counts.count {
            seen += counts[bin]
            if seen >= lowCount {
                low = Self.loudness(ofBin: bin)
                break
            }
        }
        var high = low
        var left = kept
        let highCount = Int(0.95 * Double(kept) + 0.5)
        for bin in stride(from: counts.count - 1, through: first, by: -1) {
            left -= counts[bin]
            if left < highCount {
                high = Self.loudness(ofBin: bin)
                break
            }
        }
        return max(0, high - low)
    }
}
