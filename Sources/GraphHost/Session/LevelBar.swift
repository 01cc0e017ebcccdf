/// A level drawn in text for terminals: a bar of eighth blocks over `floor`…0 dBFS, as the console's status line and
/// `top` show a meter.
public enum LevelBar {
    /// The level at which a bar is empty.
    public static let floor = -60.0
    static let eighths: [Character] = [" ", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]

    /// `width` columns: full at 0 dBFS and above, empty at `floor` and below (silence included).
    public static func bar(_ dBFS: Double, width: Int) -> String {
        let fraction = dBFS.isFinite ? min(1, max(0, (dBFS - floor) / -floor)) : 0
        let filled = Int((fraction * Double(width * 8)).rounded())
        var text = String(repeating: "█", count: filled / 8)
        if filled % 8 > 0 { text.append(eighths[filled % 8]) }
        return text + String(repeating: " ", count: width - text.count)
    }

    /// A meter in one line: the bar of the loudest channel's peak, its peak in dBFS and the clips, e.g.
    /// `▕██████▍     ▏ -12.3 dBFS` or `... clips 12`.
    public static func line(_ meter: RunStatus.Meter, width: Int = 12) -> String {
        let peak = meter.channels.map(\.peak).max() ?? -.infinity
        let clips = meter.channels.reduce(0) { $0 + $1.clips }
        return "▕" + bar(peak, width: width) + "▏ " + RunStatus.Level.text(peak) + " dBFS"
            + (clips > 0 ? " clips \(clips)" : "")
    }
}
