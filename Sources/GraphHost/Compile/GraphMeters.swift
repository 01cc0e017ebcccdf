/// The level meters of a compiled graph, owned by the control world: one for each node with an output bus (on when
/// the node says `"meter": true`) and one for each output node (on unless the node was turned off with `meter`). The
/// plan measures them; `status` reads them (`MeterReadings`).
final class GraphMeters {
    /// By node id.
    let byNode: [String: UnsafeMutablePointer<LevelMeter>]
    /// The output nodes' meters in the graph's output order, as the plan reads them.
    let outputTable: UnsafeMutablePointer<UnsafeMutablePointer<LevelMeter>>

    init(_ document: GraphDocument) {
        let format = document.format
        var byNode: [String: UnsafeMutablePointer<LevelMeter>] = [:]
        for node in document.nodes {
            let isOutput = node.definition.traits.contains(.isOutput)
            guard isOutput || node.definition.outputBuses > 0 else { continue }
            byNode[node.id] = LevelMeter.allocate(
                channels: format.channels, sampleRate: Double(format.sampleRate), on: node.meter || isOutput)
        }
        let outputs = document.outputIDs
        outputTable = .allocateRender(capacity: max(1, outputs.count))
        for (k, id) in outputs.enumerated() { (outputTable + k).initialize(to: byNode[id]!) }
        self.byNode = byNode
    }

    deinit {
        outputTable.deallocateRender()
        for meter in byNode.values { LevelMeter.deallocate(meter) }
    }
}
