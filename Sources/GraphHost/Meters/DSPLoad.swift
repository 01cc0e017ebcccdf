/// What rendering cost over a window (a second live, the whole render offline): per node and for the whole render call,
/// the average, 99th percentile and largest time per call and the average's share of the budget (the call's frames at
/// the sample rate); live, beside it, PipeWire's own figure for graphhost's node.
public struct DSPLoad: Sendable, Equatable {
    /// One node's or the render call's times per render call, in µs.
    public struct Figure: Sendable, Equatable {
        public var calls: Int
        public var averageMicros: Double
        /// The median and the 99th percentile: the upper edge of the histogram bucket (a quarter octave) holding them,
        /// at most the largest time. The median is what a ranking should read on a machine that preempts now and then.
        public var p50Micros: Double
        public var p99Micros: Double
        public var maxMicros: Double
        /// The average over the budget: 0.5 is half the quantum's duration.
        public var share: Double
    }

    public struct Node: Sendable, Equatable {
        public var id: String
        public var figure: Figure
    }

    /// PipeWire's profiler on graphhost's node: its busy time (finish − awake) per cycle.
    public struct PipeWireFigure: Sendable, Equatable {
        public var nodeID: Int
        public var cycles: Int
        public var averageMicros: Double
        public var maxMicros: Double
        /// The average over the cycle's duration (the driver's quantum at its rate).
        public var share: Double
    }

    /// The window's length, seconds of audio rendered.
    public var seconds: Double
    /// The average render call's duration of audio, µs.
    public var budgetMicros: Double
    /// The whole render call: messages, every step, and the output work (output guard, fades, output meters, copy to
    /// the caller's buffer), which counts as the output nodes' figure.
    public var callback: Figure
    /// The nodes that rendered in the window, in the graph's order.
    public var nodes: [Node]
    public var pipeWire: PipeWireFigure?
    /// Why `pipeWire` is nil (offline, no profiler in the daemon, no cycle seen yet).
    public var pipeWireProblem: String?

    /// The figures between two snapshots of `DSPLoadRecorder` (all of `current` when `previous` is nil or of another
    /// generation); `names` lists the graph's nodes in order with their kernel addresses.
    public init(
        from previous: DSPLoadRecorder.Snapshot?, to current: DSPLoadRecorder.Snapshot, sampleRate: Double,
        names: [(id: String, kernel: Int)]
    ) {
        let base = previous.flatMap { $0.generation == current.generation ? $0 : nil }
        let callCount = current.call.count - (previous?.call.count ?? 0)
        let frames = current.frames - (previous?.frames ?? 0)
        seconds = Double(frames) / sampleRate
        budgetMicros = callCount > 0 ? Double(frames) / Double(callCount) / sampleRate * 1e6 : 0
        let budget = budgetMicros
        func figure(_ now: DSPLoadRecorder.Figures, _ before: DSPLoadRecorder.Figures?) -> Figure {
            let calls = now.count - (before?.count ?? 0)
            let sum = Double(now.sumNanos - (before?.sumNanos ?? 0)) / 1000
            let maxMicros = Double(now.maxNanos) / 1000
            func percentile(_ p: Double) -> Double {
                let target = max(1, Int((Double(calls) * p).rounded(.up)))
                var seen = 0
                for b in 0..<DSPLoadRecorder.bucketCount {
                    seen += now.histogram[b] - (before?.histogram[b] ?? 0)
                    if seen >= target { return min(maxMicros, DSPLoadRecorder.bucketStart(b + 1) / 1000) }
                }
                return maxMicros
            }
            let average = calls > 0 ? sum / Double(calls) : 0
            return Figure(
                calls: calls, averageMicros: average, p50Micros: calls > 0 ? percentile(0.5) : 0,
                p99Micros: calls > 0 ? percentile(0.99) : 0, maxMicros: maxMicros,
                share: budget > 0 ? average / budget : 0)
        }
        callback = figure(current.call, previous?.call)
        nodes = names.compactMap { name in
            guard let now = current.kernels[name.kernel] else { return nil }
            let f = figure(now, base?.kernels[name.kernel])
            return f.calls > 0 ? Node(id: name.id, figure: f) : nil
        }
        pipeWireProblem = "no PipeWire stream (offline render)"
    }

    /// The node that dominates, if any: one taking more than half the render call's time while the call takes more
    /// than half the budget (by averages over the window).
    public var dominant: Node? {
        guard callback.share > 0.5, callback.averageMicros > 0 else { return nil }
        return nodes.first { $0.figure.averageMicros > 0.5 * callback.averageMicros }
    }

    /// The sum of the nodes' averages (the rest of the call is taking messages and reading the clock).
    public var nodesMicros: Double { nodes.reduce(0) { $0 + $1.figure.averageMicros } }
}

extension CompiledGraph {
    /// The graph's nodes that render, in order, with their kernels' addresses (`DSPLoad`'s names); the output nodes
    /// (joined by `+` when there are several) name the engine's output work (`DSPLoadRecorder.outputsKey`).
    public var kernelNames: [(id: String, kernel: Int)] {
        let steps = document.order.compactMap { n -> (id: String, kernel: Int)? in
            let id = document.nodes[n].id
            guard let address = instances[id]?.kernel.address else { return nil }
            return (id, Int(bitPattern: address))
        }
        let outputs = document.outputIDs
        return steps + (outputs.isEmpty ? [] : [(outputs.joined(separator: "+"), DSPLoadRecorder.outputsKey)])
    }
}

extension DSPLoad.Figure {
    public var json: JSONValue {
        .object([
            ("calls", .number(calls)), ("averageMicros", .number(averageMicros)), ("p50Micros", .number(p50Micros)),
            ("p99Micros", .number(p99Micros)),
            ("maxMicros", .number(maxMicros)), ("share", .number(share)),
        ])
    }

    /// `avg 12.34 µs  p50 11.0 µs  p99 20.1 µs  max 25.0 µs  0.9 % of budget`.
    public var text: String {
        Format.printf(
            "avg %9.2f µs  p50 %8.1f µs  p99 %8.1f µs  max %8.1f µs  %5.1f %% of budget", averageMicros, p50Micros,
            p99Micros, maxMicros, 100 * share)
    }
}

extension DSPLoad {
    public var json: JSONValue {
        .members([
            ("seconds", .number(seconds)), ("budgetMicros", .number(budgetMicros)), ("callback", callback.json),
            (
                "nodes",
                .array(nodes.map { .object([("node", .string($0.id)), ("figure", $0.figure.json)]) })
            ),
            (
                "pipeWire",
                pipeWire.map {
                    .object([
                        ("nodeID", .number($0.nodeID)), ("cycles", .number($0.cycles)),
                        ("averageMicros", .number($0.averageMicros)), ("maxMicros", .number($0.maxMicros)),
                        ("share", .number($0.share)),
                    ])
                } ?? JSONValue(.null)
            ),
            ("pipeWireProblem", pipeWireProblem.map(JSONValue.string)),
        ])
    }

    /// The figures as lines: the call, each node (with its share of the call), and PipeWire's.
    public var lines: [String] {
        let width = max(8, nodes.map(\.id.count).max() ?? 0)
        func pad(_ s: String) -> String { s + String(repeating: " ", count: max(0, width - s.count)) }
        var result = [
            Format.printf(
                "DSP load over %.2f s (%d calls, budget %.1f µs a call):", seconds, callback.calls, budgetMicros),
            "  \(pad("callback"))  \(callback.text)",
        ]
        let total = callback.averageMicros
        for node in nodes {
            result.append(
                "  \(pad(node.id))  \(node.figure.text)"
                    + Format.printf("  %5.1f %% of callback", total > 0 ? 100 * node.figure.averageMicros / total : 0))
        }
        result.append("  \(pad("nodes"))  " + Format.printf("avg %9.2f µs", nodesMicros))
        if let p = pipeWire {
            result.append(
                "  \(pad("pipewire"))  "
                    + Format.printf(
                        "avg %8.1f µs  max %8.1f µs  %5.1f %% of cycle (node %d)", p.averageMicros, p.maxMicros,
                        100 * p.share, p.nodeID))
        } else if let problem = pipeWireProblem {
            result.append("  \(pad("pipewire"))  n/a: \(problem)")
        }
        return result
    }
}
