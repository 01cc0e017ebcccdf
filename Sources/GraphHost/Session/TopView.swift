/// The console's `top`: one screen, redrawn in place like pw-top, with the run's state on top and a row per node
/// of the running graph in render order: its kind, its DSP load over the last second (average µs a call and share of
/// the budget) and, for a metered node, its levels as a bar.
public struct TopView {
    public var status: RunStatus
    public var listing: NodeListing

    public init(status: RunStatus, listing: NodeListing) {
        self.status = status
        self.listing = listing
    }

    /// The view of `control`'s graph now.
    public static func read(_ control: LiveControl) -> TopView? {
        guard case .status(let status) = try? control.perform(.status),
            case .listing(let listing) = try? control.perform(.list)
        else { return nil }
        return TopView(status: status, listing: listing)
    }

    /// The screen's lines, each at most `columns` wide, at most `rows` of them.
    public func lines(columns: Int, rows: Int) -> [String] {
        let meters = Dictionary(status.meters.map { ($0.node, $0) }, uniquingKeysWith: { a, _ in a })
        let loads = Dictionary((status.load?.nodes ?? []).map { ($0.id, $0.figure) }, uniquingKeysWith: { a, _ in a })
        let head =
            "graphhost top: " + (status.playing ? "playing" : "paused") + " at "
            + Format.printf("%.1f s", status.position) + " | quantum \(status.quantum) | xruns \(status.xruns)"
            + (status.load.map { Format.printf(" | DSP %.1f %%", 100 * $0.callback.share) } ?? "") + " | q leaves"
        let bar = max(8, min(30, columns - 90))
        let rowsOfNodes = listing.nodes.map { node -> [String] in
            let load =
                loads[node.id].map {
                    [
                        Format.printf("%.1f", $0.averageMicros), Format.printf("%.1f", $0.p99Micros),
                        Format.printf("%.1f%%", 100 * $0.share),
                    ]
                } ?? ["-", "-", "-"]
            guard let meter = meters[node.id] else { return [node.id, node.type] + load + ["", "", "", ""] }
            let peak = meter.channels.map(\.peak).max() ?? -.infinity
            let rms = meter.channels.map(\.rms).max() ?? -.infinity
            let clips = meter.channels.reduce(0) { $0 + $1.clips }
            return [node.id, node.type] + load + [
                RunStatus.Level.text(peak), RunStatus.Level.text(rms), "\(clips)",
                "▕" + LevelBar.bar(peak, width: bar) + "▏",
            ]
        }
        let table = ReplyText.table(
            header: ["NODE", "KIND", "AVG µs", "P99 µs", "LOAD", "PEAK", "RMS", "CLIPS", "LEVEL"], rowsOfNodes)
        return ([head, ""] + table).prefix(max(1, rows)).map { String($0.prefix(columns)) }
    }
}
