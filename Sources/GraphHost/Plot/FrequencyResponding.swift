import Glibc

/// A node definition whose effect is a fixed filter: `graphhost eq-curve --graph FILE --node ID` plots its response.
public protocol FrequencyResponding {
    /// What the chart's title says the node is.
    var responseTitle: String { get }
    /// The node's gain in dB at `frequency` when it runs at `sampleRate` (bypass aside).
    func responseDB(at frequency: Double, sampleRate: Int) -> Double
    /// The gains at many frequencies at once (a kind whose response is measured, not evaluated, does it once).
    func responseDB(at frequencies: [Double], sampleRate: Int) -> [Double]
}

extension FrequencyResponding {
    public func responseDB(at frequencies: [Double], sampleRate: Int) -> [Double] {
        frequencies.map { responseDB(at: $0, sampleRate: sampleRate) }
    }
}

/// The response of a `FrequencyResponding` node at 1/24-octave steps, as CSV or an SVG chart.
public struct NodeResponse {
    public var title: String
    public var sampleRate: Int
    public var points: [(frequency: Double, dB: Double)]

    public init(_ node: any FrequencyResponding, id: String, sampleRate: Int) {
        title = "\(id): \(node.responseTitle) at \(sampleRate) Hz"
        self.sampleRate = sampleRate
        var frequencies: [Double] = []
        var f = ResponsePlot.frequencyRange.lowerBound
        while f <= min(ResponsePlot.frequencyRange.upperBound, 0.475 * Double(sampleRate)) {
            frequencies.append(f)
            f *= pow(2, 1.0 / 24)
        }
        points = Array(zip(frequencies, node.responseDB(at: frequencies, sampleRate: sampleRate)))
    }

    public var csv: String {
        points.reduce("frequency_hz,response_db\n") { $0 + Format.printf("%.2f,%.3f\n", $1.frequency, $1.dB) }
    }

    /// The curve over ±12 dB, or wider when the response goes beyond that.
    public func svg() -> String {
        let finite = points.map(\.dB).filter(\.isFinite)
        let low = min(-12, ((finite.min() ?? 0) / 6).rounded(.down) * 6)
        let high = max(12, ((finite.max() ?? 0) / 6).rounded(.up) * 6)
        let curve = ResponsePlot.Curve(label: "response", color: "#dc3c28", points: points)
        return ResponsePlot(title: title, curves: [curve], dBRange: max(low, -60)...high).svg()
    }
}
