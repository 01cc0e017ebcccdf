/// The level meters and analysis taps of a compiled graph, owned by the control world: one of each for each node
/// with an output bus and each output node. A meter is on when the node says `"meter": true` (an output's unless it
/// was turned off with `meter`); a tap is off until `AudioAnalysis` watches the node. The plan measures and captures
/// them; `status` reads the meters (`MeterReadings`), `AudioAnalysis` drains the taps. Freed when the last of the
/// graph and its analysis lets go, which is after the render world retired the graph's plans.
final class GraphMeters {
    /// By node id.
    let byNode: [String: UnsafeMutablePointer<LevelMeter>]
    /// The meters in the graph's node order.
    let ordered: [(node: String, meter: UnsafeMutablePointer<LevelMeter>)]
    /// The output nodes' meters in the graph's output order, as the plan reads them.
    let outputTable: UnsafeMutablePointer<UnsafeMutablePointer<LevelMeter>>
    /// Analysis taps by node id (the nodes of `byNode`).
    let taps: [String: UnsafeMutablePointer<AnalysisTap>]
    /// The output nodes' taps in the graph's output order.
    let outputTaps: UnsafeMutablePointer<UnsafeMutablePointer<AnalysisTap>>

    init(_ document: GraphDocument) {
        let format = document.format
        var byNode: [String: UnsafeMutablePointer<LevelMeter>] = [:]
        var taps: [String: UnsafeMutablePointer<AnalysisTap>] = [:]
        var ordered: [(node: String, meter: UnsafeMutablePointer<LevelMeter>)] = []
        for node in document.nodes {
            let isOutput = node.definition.traits.contains(.isOutput)
            guard isOutput || node.definition.outputBuses > 0 else { continue }
            let meter = LevelMeter.allocate(
                channels: format.channels, sampleRate: Double(format.sampleRate), on: node.meter || isOutput)
            byNode[node.id] = meter
            ordered.append((node.id, meter))
            taps[node.id] = AnalysisTap.allocate(channels: format.channels, sampleRate: format.sampleRate)
        }
        let outputs = document.outputIDs
        outputTable = .allocateRender(capacity: max(1, outputs.count))
        outputTaps = .allocateRender(capacity: max(1, outputs.count))
        for (k, id) in outputs.enumerated() {
            (outputTable + k).initialize(to: byNode[id]!)
            (outputTaps + k).initialize(to: taps[id]!)
        }
        self.byNode = byNode
        self.ordered = ordered
        self.taps = taps
    }

    deinit {
        outputTable.deallocateRender()
        outputTaps.deallocateRender()
        for meter in byNode.values { LevelMeter.deallocate(meter) }
        for tap in taps.values { AnalysisTap.deallocate(tap) }
    }
}
