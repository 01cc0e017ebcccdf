import FoundationEssentials
import Glibc

/// A frequency-response chart as SVG: log-frequency x axis (20 Hz–20 kHz), dB y axis, coloured curves, a legend.
public struct ResponsePlot: Sendable {
    /// One labelled curve, drawn as a 2 px line through its points in order. Non-finite points break the line.
    public struct Curve: Sendable {
        public var label: String
        /// An SVG colour, such as `"#dc3c28"`.
        public var color: String
        public var points: [(frequency: Double, dB: Double)]

        public init(label: String, color: String, points: [(frequency: Double, dB: Double)]) {
            self.label = label
            self.color = color
            self.points = points
        }
    }

    public var title: String
    public var curves: [Curve]
    /// Vertical extent of the plot; curves are clipped to it.
    public var dBRange: ClosedRange<Double>

    /// Frequency extent of the x axis.
    public static let frequencyRange: ClosedRange<Double> = 20...20_000

    /// Vertical gridlines: the axis ends and decades (darker), and the octave-band centres of a ten-band EQ.
    static let frequencyTicks: [(frequency: Double, label: String, major: Bool)] = [
        (20, "20", true), (32, "32", false), (64, "64", false), (100, "100", true), (125, "125", false),
        (250, "250", false), (500, "500", false), (1_000, "1k", true), (2_000, "2k", false), (4_000, "4k", false),
        (8_000, "8k", false), (10_000, "10k", true), (16_000, "16k", false), (20_000, "20k", true),
    ]

    public init(title: String, curves: [Curve], dBRange: ClosedRange<Double>) {
        self.title = title
        self.curves = curves
        self.dBRange = dBRange
    }

    /// The chart as a standalone SVG document of `width` x `height` user units.
    ///
    /// The plot frame is `<rect class="plot-area">`, axis labels are `<text class="x-label">` (centred on their
    /// gridline) and `<text class="y-label">` (`y` on their gridline), and each curve is one or more
    /// `<polyline class="curve" data-label="…">`.
    public func svg(width: Int = 900, height: Int = 500) -> String {
        precondition(width >= 300 && height >= 200, "ResponsePlot needs at least 300x200")
        let w = Double(width)
        let h = Double(height)
        let fontSize = 12.0
        let charWidth = 0.6 * fontSize  // generous average advance of a sans-serif digit or letter
        let left = 64.0
        let right = w - 24
        let top = 44.0
        let bottom = h - 52
        let plotW = right - left
        let plotH = bottom - top

        var lo = dBRange.lowerBound
        var hi = dBRange.upperBound
        if !(hi > lo) {
            lo -= 1
            hi = lo + 2
        }
        let fLo = log10(Self.frequencyRange.lowerBound)
        let fHi = log10(Self.frequencyRange.upperBound)
        func x(_ f: Double) -> Double { left + (log10(f) - fLo) / (fHi - fLo) * plotW }
        func y(_ dB: Double) -> Double { top + (hi - dB) / (hi - lo) * plotH }
        let n = Self.number

        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" \
            viewBox="0 0 \(width) \(height)" font-family="Helvetica, Arial, sans-serif" font-size="\(n(fontSize))">
            <title>\(Self.escape(title))</title>
            <rect width="\(width)" height="\(height)" fill="#ffffff"/>
            <defs><clipPath id="plot-clip">\
            <rect x="\(n(left))" y="\(n(top))" width="\(n(plotW))" height="\(n(plotH))"/>\
            </clipPath></defs>

            """

        // Gridlines: every 3 dB (wider steps, in multiples of 3, for large ranges) and the frequency ticks.
        let step = 3.0 * max(1, ((hi - lo) / 42).rounded(.up))
        let dBTicks = stride(from: (lo / step).rounded(.up) * step, through: hi + 1e-9, by: step).map { $0 }
        var minor = ""
        var major = ""
        for dB in dBTicks {
            let line = "<line x1=\"\(n(left))\" y1=\"\(n(y(dB)))\" x2=\"\(n(right))\" y2=\"\(n(y(dB)))\"/>\n"
            if abs(dB) < 1e-9 { major += line } else { minor += line }
        }
        for tick in Self.frequencyTicks {
            let line =
                "<line x1=\"\(n(x(tick.frequency)))\" y1=\"\(n(top))\" "
                + "x2=\"\(n(x(tick.frequency)))\" y2=\"\(n(bottom))\"/>\n"
            if tick.major { major += line } else { minor += line }
        }
        out += "<g stroke=\"#e3e3e3\" stroke-width=\"1\" shape-rendering=\"crispEdges\">\n\(minor)</g>\n"
        out += "<g stroke=\"#b8b8b8\" stroke-width=\"1\" shape-rendering=\"crispEdges\">\n\(major)</g>\n"

        // Axis labels; a frequency label that would touch one already placed is left out (decades first).
        out += "<g fill=\"#505050\">\n"
        for dB in dBTicks {
            out +=
                "<text class=\"y-label\" x=\"\(n(left - 8))\" y=\"\(n(y(dB)))\" "
                + "dy=\"0.35em\" text-anchor=\"end\">\(Self.dBLabel(dB))</text>\n"
        }
        var placed: [ClosedRange<Double>] = []
        for pass in [true, false] {
            for tick in Self.frequencyTicks where tick.major == pass {
                let half = Double(tick.label.count) * charWidth / 2 + 2
                let span = (x(tick.frequency) - half)...(x(tick.frequency) + half)
                guard !placed.contains(where: { $0.overlaps(span) }) else { continue }
                placed.append(span)
                out +=
                    "<text class=\"x-label\" x=\"\(n(x(tick.frequency)))\" "
                    + "y=\"\(n(bottom + 18))\" text-anchor=\"middle\">\(tick.label)</text>\n"
            }
        }
        out += "</g>\n"
        out += "<g fill=\"#202020\" font-size=\"13\" text-anchor=\"middle\">\n"
        out += "<text x=\"\(n(left + plotW / 2))\" y=\"\(n(bottom + 40))\">Frequency (Hz)</text>\n"
        out += "<text transform=\"translate(\(n(20)) \(n(top + plotH / 2))) rotate(-90)\">Gain (dB)</text>\n"
        out += "</g>\n"

        // Title, shrunk to fit the width.
        let titleSize = min(16, (w - 16) / (Double(max(1, title.count)) * 0.6))
        out +=
            "<text x=\"\(n(w / 2))\" y=\"\(n(26))\" font-size=\"\(n(titleSize))\" font-weight=\"bold\" "
            + "text-anchor=\"middle\" fill=\"#000000\">\(Self.escape(title))</text>\n"

        // Curves, clipped to the plot area.
        out +=
            "<g clip-path=\"url(#plot-clip)\" fill=\"none\" stroke-width=\"2\" "
            + "stroke-linejoin=\"round\" stroke-linecap=\"round\">\n"
        for curve in curves {
            var runs: [[String]] = [[]]
            for p in curve.points {
                if p.frequency > 0, p.frequency.isFinite, p.dB.isFinite {
                    runs[runs.count - 1].append("\(n(x(p.frequency))),\(n(y(p.dB)))")
                } else if !runs[runs.count - 1].isEmpty {
                    runs.append([])
                }
            }
            for run in runs where !run.isEmpty {
                out +=
                    "<polyline class=\"curve\" data-label=\"\(Self.escape(curve.label))\" "
                    + "stroke=\"\(Self.escape(curve.color))\" points=\"\(run.joined(separator: " "))\"/>\n"
            }
        }
        out += "</g>\n"
        out +=
            "<rect class=\"plot-area\" x=\"\(n(left))\" y=\"\(n(top))\" width=\"\(n(plotW))\" height=\"\(n(plotH))\" "
            + "fill=\"none\" stroke=\"#707070\" stroke-width=\"1\" shape-rendering=\"crispEdges\"/>\n"

        // Legend in the top-right corner of the plot.
        if !curves.isEmpty {
            let pad = 8.0
            let sample = 24.0
            let rowH = 18.0
            let labelW = Double(curves.map(\.label.count).max() ?? 0) * charWidth
            let boxW = 3 * pad + sample + labelW
            let boxH = 2 * pad + rowH * Double(curves.count) - 6
            let bx = right - 10 - boxW
            let by = top + 10
            out += "<g class=\"legend\">\n"
            out +=
                "<rect x=\"\(n(bx))\" y=\"\(n(by))\" width=\"\(n(boxW))\" height=\"\(n(boxH))\" "
                + "fill=\"#ffffff\" fill-opacity=\"0.9\" stroke=\"#a0a0a0\"/>\n"
            for (i, curve) in curves.enumerated() {
                let midY = by + pad + rowH * Double(i) + 6
                out +=
                    "<line x1=\"\(n(bx + pad))\" y1=\"\(n(midY))\" x2=\"\(n(bx + pad + sample))\" "
                    + "y2=\"\(n(midY))\" stroke=\"\(Self.escape(curve.color))\" stroke-width=\"2\"/>\n"
                out +=
                    "<text x=\"\(n(bx + 2 * pad + sample))\" y=\"\(n(midY))\" dy=\"0.35em\" "
                    + "fill=\"#202020\">\(Self.escape(curve.label))</text>\n"
            }
            out += "</g>\n"
        }
        out += "</svg>\n"
        return out
    }

    /// A gridline value as "0", "+3" or "-6".
    static func dBLabel(_ value: Double) -> String {
        let rounded = Int(value.rounded())
        return rounded > 0 ? "+\(rounded)" : "\(rounded)"
    }

    /// A coordinate with at most two decimals and no trailing zeros.
    static func number(_ value: Double) -> String {
        var s = Format.printf("%.2f", value)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s == "-0" ? "0" : s
    }

    /// `text` with the XML special characters escaped, for element content and attribute values.
    static func escape(_ text: String) -> String {
        var out = ""
        for ch in text {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(ch)
            }
        }
        return out
    }
}
