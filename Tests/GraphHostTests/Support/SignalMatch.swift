import Foundation

/// Signal analysis for comparing a recording with a reference.
enum SignalMatch {
    /// Mono mixdown of interleaved stereo.
    static func mono(_ x: [Float]) -> [Float] {
        stride(from: 0, to: x.count - 1, by: 2).map { (x[$0] + x[$0 + 1]) / 2 }
    }

    static func firstSound(_ x: [Float], threshold: Float = 1e-3) -> Int? { x.firstIndex { abs($0) > threshold } }

    /// Splits `reference` into windows of `window` samples and counts those found intact in `recording` (error at
    /// least 60 dB below the window): at the previous window's lag, or after a slip at any lag within ±`search`.
    /// Near-silent windows are not counted.
    static func intactWindows(recording: [Float], reference: [Float], window: Int = 4800, search: Int = 4096) -> (
        intact: Int, total: Int
    ) {
        guard let r0 = firstSound(recording), let f0 = firstSound(reference) else { return (0, 0) }
        func energy(_ start: Int, _ count: Int) -> Double {
            var e = 0.0
            for i in start..<(start + count) { e += Double(reference[i]) * Double(reference[i]) }
            return e
        }
        func matches(_ lag: Int, _ start: Int, _ count: Int, _ limit: Double) -> Bool {
            guard start + lag >= 0, start + lag + count <= recording.count else { return false }
            var e = 0.0
            for i in start..<(start + count) {
                let d = Double(recording[i + lag]) - Double(reference[i])
                e += d * d
                if e > limit { return false }
            }
            return true
        }
        var lag = r0 - f0
        var intact = 0
        var total = 0
        for start in stride(from: 0, through: reference.count - window, by: window) {
            let limit = 1e-6 * energy(start, window)
            guard limit > 1e-12 * Double(window) else { continue }
            total += 1
            if matches(lag, start, window, limit) {
                intact += 1
                continue
            }
            let probe = 64
            let probeLimit = max(1e-6 * energy(start, probe), 1e-15)
            if let found = ((lag - search)...(lag + search)).first(where: {
                matches($0, start, probe, probeLimit) && matches($0, start, window, limit)
            }) {
                lag = found
                intact += 1
            }
        }
        return (intact, total)
    }

    /// The frame where interleaved `x` first holds a non-zero sample.
    static func firstNonZeroFrame(_ x: [Float], channels: Int) -> Int? {
        x.firstIndex { $0 != 0 }.map { $0 / channels }
    }

    /// Normalized correlation of `a` at offset `lagA` with `b`, over `count` samples.
    static func correlation(_ a: [Float], _ lagA: Int, _ b: [Float], count: Int) -> Double {
        var ab = 0.0
        var aa = 0.0
        var bb = 0.0
        for i in 0..<count {
            let x = Double(a[lagA + i])
            let y = Double(b[i])
            ab += x * y
            aa += x * x
            bb += y * y
        }
        return ab / max((aa * bb).squareRoot(), 1e-30)
    }

    /// Aligns `recording` to `reference` (onset estimate, refined by correlation over ±2000 samples)
    /// and returns the lag and the normalized correlation over the whole overlap.
    static func align(recording: [Float], reference: [Float], trimEnd: Int) -> (lag: Int, correlation: Double)? {
        guard let r0 = firstSound(recording), let f0 = firstSound(reference) else { return nil }
        var best = (lag: 0, c: -2.0)
        let window = min(48000, reference.count - f0 - 1)
        for lag in (r0 - f0 - 2000)...(r0 - f0 + 2000) where lag >= 0 && lag + f0 + window < recording.count {
            let c = correlation(recording, lag + f0, Array(reference[f0..<(f0 + window)]), count: window)
            if c > best.c { best = (lag, c) }
        }
        let overlap = min(recording.count - best.lag, reference.count) - trimEnd
        guard overlap > 48000 else { return nil }
        return (best.lag, correlation(recording, best.lag, Array(reference[0..<overlap]), count: overlap))
    }
}
