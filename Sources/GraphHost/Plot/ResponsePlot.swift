import Foundation

/// A frequency-response chart: log-frequency x axis (20 Hz–20 kHz), dB y axis, several coloured curves, a legend.
///
/// Rendering is self-contained (software rasteriser, built-in bitmap font, `PNGEncoder`).
public struct ResponsePlot: Sendable {
    /// One labelled curve; points are drawn in order and joined by anti-aliased 2 px lines.
    /// Points with a non-finite value break the line.
    public struct Curve: Sendable {
        public var label: String
        public var color: (UInt8, UInt8, UInt8)
        public var points: [(frequency: Double, dB: Double)]

        public init(label: String, color: (UInt8, UInt8, UInt8), points: [(frequency: Double, dB: Double)]) {
            self.label = label
            self.color = color
            self.points = points
        }
    }

    public var title: String
    public var curves: [Curve]
    /// Vertical extent of the plot; values outside are clipped.
    public var dBRange: ClosedRange<Double>

    /// Frequency extent of the x axis.
    public static let frequencyRange: ClosedRange<Double> = 20...20_000

    public init(title: String, curves: [Curve], dBRange: ClosedRange<Double>) {
        self.title = title
        self.curves = curves
        self.dBRange = dBRange
    }

    /// Renders to a PNG (default 900x500) and returns its bytes.
    public func png(width: Int = 900, height: Int = 500) -> [UInt8] {
        PNGEncoder.encode(width: width, height: height, rgb: render(width: width, height: height))
    }

    /// Renders to row-major 8-bit RGB pixels (`width * height * 3` bytes).
    public func render(width: Int = 900, height: Int = 500) -> [UInt8] {
        precondition(width >= 200 && height >= 150, "ResponsePlot needs at least 200x150 pixels")
        var canvas = Canvas(width: width, height: height)
        let s = max(1, min(width / 900, height / 500))  // text scale
        let charW = 6 * s, lineH = 10 * s

        // Plot area (pixel edges).
        let left = 6 * charW + 12 * s, right = width - 12 * s
        let top = 36 * s, bottom = height - 2 * lineH - 8 * s
        let plotW = Double(right - left), plotH = Double(bottom - top)

        var lo = dBRange.lowerBound, hi = dBRange.upperBound
        if !(hi > lo) { lo -= 1; hi = lo + 2 }
        let fLo = log10(Self.frequencyRange.lowerBound), fHi = log10(Self.frequencyRange.upperBound)
        func xOf(_ f: Double) -> Double { Double(left) + (log10(f) - fLo) / (fHi - fLo) * plotW }
        func yOf(_ dB: Double) -> Double { Double(top) + (hi - dB) / (hi - lo) * plotH }

        let gridColor: RGB = (225, 225, 225), majorColor: RGB = (180, 180, 180)
        let textColor: RGB = (40, 40, 40), labelColor: RGB = (90, 90, 90)

        // Horizontal grid: every 3 dB (widened in multiples of 3 for large ranges).
        let step = 3.0 * max(1, (hi - lo) / 42).rounded(.up)
        var dB = (lo / step).rounded(.up) * step
        while dB <= hi + 1e-9 {
            let y = Int(yOf(dB).rounded())
            canvas.hLine(y: min(y, bottom - 1), x0: left, x1: right - 1, color: abs(dB) < 1e-9 ? majorColor : gridColor)
            let text = Self.dBLabel(dB, step: step)
            canvas.text(text, x: left - 8 * s - canvas.textWidth(text, scale: s), y: y - 7 * s / 2, scale: s, color: labelColor)
            dB += step
        }
        canvas.text("dB", x: left - 8 * s - canvas.textWidth("dB", scale: s), y: 22 * s, scale: s, color: textColor)

        // Vertical grid: decades (darker) and octave-band centres, labelled.
        let ticks: [(Double, String, Bool)] = [
            (20, "20", true), (32, "32", false), (64, "64", false), (100, "100", true), (125, "125", false),
            (250, "250", false), (500, "500", false), (1_000, "1k", true), (2_000, "2k", false), (4_000, "4k", false),
            (8_000, "8k", false), (10_000, "10k", true), (16_000, "16k", false), (20_000, "20k", true),
        ]
        var usedSpans: [ClosedRange<Int>] = []  // label extents already drawn; decades win over minor ticks
        for pass in [true, false] {
            for (f, text, major) in ticks where major == pass {
                let x = min(Int(xOf(f).rounded()), right - 1)
                canvas.vLine(x: x, y0: top, y1: bottom - 1, color: major ? majorColor : gridColor)
                let textW = canvas.textWidth(text, scale: s)
                let x0 = min(max(0, x - textW / 2), width - textW - 1)
                let span = (x0 - 3 * s)...(x0 + textW + 3 * s)
                guard !usedSpans.contains(where: { $0.overlaps(span) }) else { continue }
                usedSpans.append(span)
                canvas.text(text, x: x0, y: bottom + 6 * s, scale: s, color: labelColor)
            }
        }
        let axisTitle = "Frequency (Hz)"
        canvas.text(axisTitle, x: left + (right - left - canvas.textWidth(axisTitle, scale: s)) / 2,
                    y: bottom + 6 * s + lineH + 2 * s, scale: s, color: textColor)

        // Plot frame and title.
        canvas.rectOutline(x0: left, y0: top, x1: right - 1, y1: bottom - 1, color: (110, 110, 110))
        // Title: halve its size if too wide, then truncate with "..." as a last resort.
        var titleScale = 2 * s, titleText = title
        if canvas.textWidth(titleText, scale: titleScale) > width - 8 { titleScale = s }
        let maxChars = (width - 8 + titleScale) / (6 * titleScale)
        if titleText.count > maxChars { titleText = String(titleText.prefix(max(0, maxChars - 3))) + "..." }
        let titleW = canvas.textWidth(titleText, scale: titleScale)
        let titleY = titleScale == s ? 4 * s + 4 * s : 4 * s
        canvas.text(titleText, x: max(4, (width - titleW) / 2), y: titleY, scale: titleScale, color: (0, 0, 0))

        // Curves, clipped to the plot area.
        let clip = (x0: left + 1, y0: top + 1, x1: right - 2, y1: bottom - 2)
        for curve in curves {
            var coverage = [Float](repeating: 0, count: width * height)
            var previous: (Double, Double)?
            for p in curve.points {
                guard p.frequency > 0, p.frequency.isFinite, p.dB.isFinite else { previous = nil; continue }
                let point = (xOf(p.frequency), yOf(p.dB))
                if let a = previous {
                    Self.strokeSegment(a, point, halfWidth: Double(s), into: &coverage, width: width, clip: clip)
                } else {
                    Self.strokeSegment(point, point, halfWidth: Double(s), into: &coverage, width: width, clip: clip)
                }
                previous = point
            }
            for i in coverage.indices where coverage[i] > 0 {
                canvas.blend(index: i, color: curve.color, alpha: Double(coverage[i]))
            }
        }

        // Legend box in the top-right corner of the plot.
        if !curves.isEmpty {
            let sample = 22 * s, pad = 6 * s
            let labelW = curves.map { canvas.textWidth($0.label, scale: s) }.max() ?? 0
            let boxW = pad * 3 + sample + labelW, boxH = pad * 2 + lineH * curves.count - 2 * s
            let bx = right - 8 * s - boxW, by = top + 8 * s
            canvas.fillRect(x0: bx, y0: by, x1: bx + boxW - 1, y1: by + boxH - 1, color: (255, 255, 255))
            canvas.rectOutline(x0: bx, y0: by, x1: bx + boxW - 1, y1: by + boxH - 1, color: (150, 150, 150))
            for (i, curve) in curves.enumerated() {
                let rowY = by + pad + i * lineH
                let midY = rowY + 7 * s / 2
                canvas.fillRect(x0: bx + pad, y0: midY - s + 1, x1: bx + pad + sample - 1, y1: midY + s, color: curve.color)
                canvas.text(curve.label, x: bx + 2 * pad + sample, y: rowY, scale: s, color: textColor)
            }
        }
        return canvas.pixels
    }

    /// Formats a grid value: "0", "+3", "-6", or with one decimal if the step is fractional.
    static func dBLabel(_ value: Double, step: Double) -> String {
        if abs(value) < 1e-9 { return "0" }
        let body = step == step.rounded() ? String(Int(value.rounded())) : String(format: "%.1f", value)
        return value > 0 ? "+" + body : body
    }

    /// Accumulates anti-aliased coverage of a thick segment (round caps) into `coverage`, keeping the maximum
    /// per pixel so that overlapping segments of one curve do not darken their joints.
    static func strokeSegment(_ a: (Double, Double), _ b: (Double, Double), halfWidth: Double,
                              into coverage: inout [Float], width: Int,
                              clip: (x0: Int, y0: Int, x1: Int, y1: Int)) {
        let reach = halfWidth + 1
        let minX = max(clip.x0, Int((min(a.0, b.0) - reach).rounded(.down)))
        let maxX = min(clip.x1, Int((max(a.0, b.0) + reach).rounded(.up)))
        let minY = max(clip.y0, Int((min(a.1, b.1) - reach).rounded(.down)))
        let maxY = min(clip.y1, Int((max(a.1, b.1) + reach).rounded(.up)))
        guard minX <= maxX, minY <= maxY else { return }
        let dx = b.0 - a.0, dy = b.1 - a.1
        let lengthSquared = dx * dx + dy * dy
        for y in minY...maxY {
            let py = Double(y) + 0.5
            for x in minX...maxX {
                let px = Double(x) + 0.5
                var t = lengthSquared > 0 ? ((px - a.0) * dx + (py - a.1) * dy) / lengthSquared : 0
                t = min(1, max(0, t))
                let ex = px - (a.0 + t * dx), ey = py - (a.1 + t * dy)
                let cover = Float(min(1, max(0, halfWidth + 0.5 - (ex * ex + ey * ey).squareRoot())))
                let i = y * width + x
                if cover > coverage[i] { coverage[i] = cover }
            }
        }
    }
}

private typealias RGB = (UInt8, UInt8, UInt8)

/// A white RGB raster with the few drawing primitives the chart needs.
private struct Canvas {
    let width: Int, height: Int
    var pixels: [UInt8]

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: 255, count: width * height * 3)
    }

    mutating func set(_ x: Int, _ y: Int, _ c: RGB) {
        guard x >= 0, y >= 0, x < width, y < height else { return }
        let i = (y * width + x) * 3
        pixels[i] = c.0; pixels[i + 1] = c.1; pixels[i + 2] = c.2
    }

    /// Mixes `color` over pixel number `index` with opacity `alpha` (0...1).
    mutating func blend(index: Int, color: RGB, alpha: Double) {
        let i = index * 3
        func mix(_ old: UInt8, _ new: UInt8) -> UInt8 {
            UInt8((Double(old) * (1 - alpha) + Double(new) * alpha).rounded())
        }
        pixels[i] = mix(pixels[i], color.0)
        pixels[i + 1] = mix(pixels[i + 1], color.1)
        pixels[i + 2] = mix(pixels[i + 2], color.2)
    }

    mutating func hLine(y: Int, x0: Int, x1: Int, color: RGB) {
        guard x0 <= x1 else { return }
        for x in x0...x1 { set(x, y, color) }
    }

    mutating func vLine(x: Int, y0: Int, y1: Int, color: RGB) {
        guard y0 <= y1 else { return }
        for y in y0...y1 { set(x, y, color) }
    }

    mutating func fillRect(x0: Int, y0: Int, x1: Int, y1: Int, color: RGB) {
        guard y0 <= y1 else { return }
        for y in y0...y1 { hLine(y: y, x0: x0, x1: x1, color: color) }
    }

    mutating func rectOutline(x0: Int, y0: Int, x1: Int, y1: Int, color: RGB) {
        hLine(y: y0, x0: x0, x1: x1, color: color)
        hLine(y: y1, x0: x0, x1: x1, color: color)
        vLine(x: x0, y0: y0, y1: y1, color: color)
        vLine(x: x1, y0: y0, y1: y1, color: color)
    }

    /// Width in pixels of `string` drawn with `BitmapFont` at `scale`.
    func textWidth(_ string: String, scale: Int) -> Int {
        max(0, string.count * 6 * scale - scale)
    }

    /// Draws `string` with its top-left corner at (x, y); unknown characters render as "?".
    mutating func text(_ string: String, x: Int, y: Int, scale: Int, color: RGB) {
        var penX = x
        for ch in string {
            let columns = BitmapFont.columns(for: ch)
            for (cx, bits) in columns.enumerated() where bits != 0 {
                for row in 0..<8 where bits & (1 << row) != 0 {
                    fillRect(x0: penX + cx * scale, y0: y + row * scale,
                             x1: penX + (cx + 1) * scale - 1, y1: y + (row + 1) * scale - 1, color: color)
                }
            }
            penX += 6 * scale
        }
    }
}

/// A compact 5x7 bitmap font (plus a descender row) covering the characters chart labels use.
private enum BitmapFont {
    /// The five column bytes of `ch` (bit 0 = top row), or those of "?" if `ch` is not in the table.
    static func columns(for ch: Character) -> ArraySlice<UInt8> {
        let index = glyphIndex[ch] ?? glyphIndex["?"]!
        return glyphColumns[(index * 5)..<(index * 5 + 5)]
    }

    static let glyphIndex: [Character: Int] = Dictionary(uniqueKeysWithValues: glyphChars.enumerated().map { ($1, $0) })

    static let glyphChars = Array(" 0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-+.,:&()/%=_'?![]#")
    /// 5 column bytes per glyph (bit 0 = top row, bit 7 = descender row), same order as `glyphChars`.
    static let glyphColumns: [UInt8] = [
        0x00, 0x00, 0x00, 0x00, 0x00, 0x3E, 0x51, 0x49, 0x45, 0x3E, 0x00, 0x42, 0x7F, 0x40, 0x00,
        0x42, 0x61, 0x51, 0x49, 0x46, 0x21, 0x41, 0x45, 0x4B, 0x31, 0x18, 0x14, 0x12, 0x7F, 0x10,
        0x27, 0x45, 0x45, 0x45, 0x39, 0x3C, 0x4A, 0x49, 0x49, 0x30, 0x01, 0x71, 0x09, 0x05, 0x03,
        0x36, 0x49, 0x49, 0x49, 0x36, 0x06, 0x49, 0x49, 0x29, 0x1E, 0x7E, 0x09, 0x09, 0x09, 0x7E,
        0x7F, 0x49, 0x49, 0x49, 0x36, 0x3E, 0x41, 0x41, 0x41, 0x22, 0x7F, 0x41, 0x41, 0x22, 0x1C,
        0x7F, 0x49, 0x49, 0x49, 0x41, 0x7F, 0x09, 0x09, 0x09, 0x01, 0x3E, 0x41, 0x49, 0x49, 0x7A,
        0x7F, 0x08, 0x08, 0x08, 0x7F, 0x00, 0x41, 0x7F, 0x41, 0x00, 0x20, 0x40, 0x41, 0x3F, 0x01,
        0x7F, 0x08, 0x14, 0x22, 0x41, 0x7F, 0x40, 0x40, 0x40, 0x40, 0x7F, 0x02, 0x0C, 0x02, 0x7F,
        0x7F, 0x04, 0x08, 0x10, 0x7F, 0x3E, 0x41, 0x41, 0x41, 0x3E, 0x7F, 0x09, 0x09, 0x09, 0x06,
        0x3E, 0x41, 0x51, 0x21, 0x5E, 0x7F, 0x09, 0x19, 0x29, 0x46, 0x46, 0x49, 0x49, 0x49, 0x31,
        0x01, 0x01, 0x7F, 0x01, 0x01, 0x3F, 0x40, 0x40, 0x40, 0x3F, 0x1F, 0x20, 0x40, 0x20, 0x1F,
        0x3F, 0x40, 0x38, 0x40, 0x3F, 0x63, 0x14, 0x08, 0x14, 0x63, 0x03, 0x04, 0x78, 0x04, 0x03,
        0x61, 0x51, 0x49, 0x45, 0x43, 0x20, 0x54, 0x54, 0x54, 0x78, 0x7F, 0x48, 0x44, 0x44, 0x38,
        0x38, 0x44, 0x44, 0x44, 0x20, 0x38, 0x44, 0x44, 0x48, 0x7F, 0x38, 0x54, 0x54, 0x54, 0x18,
        0x08, 0x7E, 0x09, 0x01, 0x02, 0x18, 0xA4, 0xA4, 0xA4, 0x7C, 0x7F, 0x08, 0x04, 0x04, 0x78,
        0x00, 0x44, 0x7D, 0x40, 0x00, 0x40, 0x80, 0x84, 0x7D, 0x00, 0x7F, 0x10, 0x28, 0x44, 0x00,
        0x00, 0x41, 0x7F, 0x40, 0x00, 0x7C, 0x04, 0x78, 0x04, 0x78, 0x7C, 0x08, 0x04, 0x04, 0x78,
        0x38, 0x44, 0x44, 0x44, 0x38, 0xFC, 0x24, 0x24, 0x24, 0x18, 0x18, 0x24, 0x24, 0x24, 0xFC,
        0x7C, 0x08, 0x04, 0x04, 0x08, 0x48, 0x54, 0x54, 0x54, 0x24, 0x04, 0x3F, 0x44, 0x40, 0x20,
        0x3C, 0x40, 0x40, 0x20, 0x7C, 0x1C, 0x20, 0x40, 0x20, 0x1C, 0x3C, 0x40, 0x30, 0x40, 0x3C,
        0x44, 0x28, 0x10, 0x28, 0x44, 0x1C, 0xA0, 0xA0, 0xA0, 0x7C, 0x44, 0x64, 0x54, 0x4C, 0x44,
        0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x3E, 0x08, 0x08, 0x00, 0x60, 0x60, 0x00, 0x00,
        0x00, 0xA0, 0x60, 0x00, 0x00, 0x00, 0x36, 0x36, 0x00, 0x00, 0x36, 0x49, 0x55, 0x22, 0x50,
        0x00, 0x1C, 0x22, 0x41, 0x00, 0x00, 0x41, 0x22, 0x1C, 0x00, 0x20, 0x10, 0x08, 0x04, 0x02,
        0x23, 0x13, 0x08, 0x64, 0x62, 0x14, 0x14, 0x14, 0x14, 0x14, 0x80, 0x80, 0x80, 0x80, 0x80,
        0x00, 0x04, 0x03, 0x00, 0x00, 0x02, 0x01, 0x51, 0x09, 0x06, 0x00, 0x00, 0x5F, 0x00, 0x00,
        0x00, 0x7F, 0x41, 0x41, 0x00, 0x00, 0x41, 0x41, 0x7F, 0x00, 0x14, 0x7F, 0x14, 0x7F, 0x14
    ]
}
