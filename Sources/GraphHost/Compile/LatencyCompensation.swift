/// Latency compensation: where parallel paths with different plugin latencies meet in a mixer, the inputs that arrive
/// early are delayed so that all arrive in step (a dry path summed with a look-ahead limiter is not comb-filtered).
/// Computed from the latency each node reports, in render order.
public struct LatencyCompensation: Equatable, Sendable {
    /// Frames of latency at each node's output, by node id.
    public var latency: [String: Int] = [:]
    /// The delay of each input of each mixer, in frames, by mixer id.
    public var delays: [String: [Int]] = [:]
    /// The latency at the output: what the graph adds to what it plays.
    public var total = 0

    init() {}

    init(document: GraphDocument, instances: [String: NodeInstance]) {
        var atNode: [Int: Int] = [:]
        for n in document.order {
            let node = document.nodes[n]
            var arrivals = Array(repeating: 0, count: node.definition.inputBuses)
            for link in document.links where link.to == n && link.toBus < arrivals.count {
                arrivals[link.toBus] = atNode[link.from] ?? 0
            }
            let latest = arrivals.max() ?? 0
            if node.definition.traits.contains(.mixesInputs) { delays[node.id] = arrivals.map { latest - $0 } }
            atNode[n] = latest + (instances[node.id]?.latency ?? 0)
            latency[node.id] = atNode[n]
            if node.definition.outputBuses == 0 { total = max(total, atNode[n]!) }
        }
    }

    /// Milliseconds at `sampleRate`, for messages.
    public func milliseconds(_ frames: Int, sampleRate: Int) -> String {
        Format.number((Double(frames) * 1000 / Double(sampleRate) * 100).rounded() / 100)
    }
}
