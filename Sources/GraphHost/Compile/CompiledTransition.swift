import FoundationEssentials
import Glibc

/// The memory of a `PlanTransition` from one compiled graph to the next, owned by the control world.
/// Its plan is the union of both graphs in one topological order: nodes only the old graph has, every node
/// of the new one (kept nodes once), and crossfades where old and new differ: at the output, and at each input
/// of a kept node whose source changed (so a kept reverb hears its input cross over instead of a jump).
final class CompiledTransition {
    let transition: UnsafeMutablePointer<PlanTransition>
    private let compiled: CompiledPlan
    private let clock: UnsafeMutablePointer<FadeClock>
    private let gains: UnsafeMutablePointer<Float>
    private let crossfades: UnsafeMutablePointer<CrossfadeKernel>
    private let crossfadeCount: Int

    /// One node of the union: a node of either graph (by key) or a crossfade of two sources.
    struct UnionNode {
        /// `spill`: a crossfade whose old side rings out (spillover); `gate`: fades its one input out (the old
        /// graph's input in a spillover).
        enum Role {
            case old(String)
            case new(String)
            case crossfade, spill, gate
        }
        var key: String
        var role: Role
        var inputs: [Source?]
        var outputs: Int
    }
    /// An output bus of a union node, by key.
    struct Source: Equatable {
        var key: String
        var bus = 0
    }

    /// The union of `old` and `new` keeping `kept` in render order plus the source of each of the new graph's
    /// outputs; nil when keeping those nodes would need a cycle (they appear in a different order in the two graphs).
    /// With `spillover`, the crossfades let their old side ring out, and every input of the old graph's effects from
    /// outside them (kept nodes, sources) is gated, as is a crossfade's old side that is no tail.
    static func union(old: GraphDocument, new: GraphDocument, kept: Set<String>, spillover: Bool = false) -> (
        nodes: [UnionNode], outputs: [Source?]
    )? {
        func oldKey(_ id: String) -> String { kept.contains(id) ? id : "old:" + id }
        func sources(_ doc: GraphDocument, _ n: Int, key: (String) -> String) -> [Source?] {
            var inputs = [Source?](repeating: nil, count: doc.nodes[n].definition.inputBuses)
            for link in doc.links where link.to == n {
                inputs[link.toBus] = Source(key: key(doc.nodes[link.from].id), bus: link.fromBus)
            }
            return inputs
        }
        func outputSource(_ doc: GraphDocument, _ id: String, key: (String) -> String) -> Source? {
            guard let n = doc.node(id)?.index else { return nil }
            return doc.links.first { $0.to == n }.map { Source(key: key(doc.nodes[$0.from].id), bus: $0.fromBus) }
        }
        var nodes: [UnionNode] = []
        for n in new.order where !new.nodes[n].definition.traits.contains(.isOutput) {
            let node = new.nodes[n]
            var inputs = sources(new, n, key: { $0 })
            if kept.contains(node.id), let o = old.node(node.id) {
                let before = sources(old, o.index, key: oldKey)
                // Event inputs (an instrument's, a MIDI processor's, a MIDI gate's) are switched, not crossfaded.
                for b in inputs.indices
                where (b < before.count ? before[b] : nil) != inputs[b] && !node.definition.carriesEvents(bus: b) {
                    let key = "crossfade:\(node.id):\(b)"
                    nodes.append(
                        UnionNode(
                            key: key, role: .crossfade, inputs: [b < before.count ? before[b] : nil, inputs[b]],
                            outputs: 1))
                    inputs[b] = Source(key: key)
                }
            }
            nodes.append(
                UnionNode(key: node.id, role: .new(node.id), inputs: inputs, outputs: node.definition.outputBuses))
        }
        for n in old.order where !kept.contains(old.nodes[n].id) && !old.nodes[n].definition.traits.contains(.isOutput)
        {
            let node = old.nodes[n]
            nodes.append(
                UnionNode(
                    key: oldKey(node.id), role: .old(node.id), inputs: sources(old, n, key: oldKey),
                    outputs: node.definition.outputBuses))
        }
        // Each output crossfades from what the old graph played there (its output of the same id, or its first output
        // when the ids differ) to the new source.
        var outputs: [Source?] = []
        for (k, id) in new.outputIDs.enumerated() {
            let output = outputSource(new, id, key: { $0 })
            let oldID = old.outputIDs.contains(id) ? id : (k == 0 ? old.outputIDs.first : nil)
            let oldOutput = oldID.flatMap { outputSource(old, $0, key: oldKey) }
            if oldOutput != output {
                let key = "crossfade:output:\(id)"
                nodes.append(UnionNode(key: key, role: .crossfade, inputs: [oldOutput, output], outputs: 1))
                outputs.append(Source(key: key))
            } else {
                outputs.append(output)
            }
        }
        if spillover { nodes = gated(nodes, old: old) }
        // Kahn's algorithm, stable in the order above.
        var remaining = nodes
        var placed: Set<String> = []
        var ordered: [UnionNode] = []
        while !remaining.isEmpty {
            guard
                let i = remaining.firstIndex(where: { $0.inputs.allSatisfy { $0 == nil || placed.contains($0!.key) } })
            else { return nil }
            placed.insert(remaining[i].key)
            ordered.append(remaining.remove(at: i))
        }
        return (ordered, outputs)
    }

    /// The spillover form of `nodes`: crossfades spill, and gates stop what flows into the old graph's effects.
    static func gated(_ nodes: [UnionNode], old: GraphDocument) -> [UnionNode] {
        // A tail comes out of an effect only the old graph has; everything else is live signal.
        func isTail(_ source: Source) -> Bool {
            guard source.key.hasPrefix("old:"), let node = old.node(String(source.key.dropFirst(4))) else {
                return false
            }
            return node.definition.inputBuses > 0
        }
        var result: [UnionNode] = []
        func gate(_ source: Source?, into key: String, _ b: Int) -> Source? {
            guard let source, !isTail(source) else { return source }
            let gateKey = "gate:\(key):\(b)"
            result.append(UnionNode(key: gateKey, role: .gate, inputs: [source, nil], outputs: 1))
            return Source(key: gateKey)
        }
        for var node in nodes {
            switch node.role {
            case .old(let id):
                let definition = old.node(id)?.definition
                for b in node.inputs.indices where definition?.carriesEvents(bus: b) != true {
                    node.inputs[b] = gate(node.inputs[b], into: node.key, b)
                }
            case .crossfade:
                node.role = .spill
                node.inputs[0] = gate(node.inputs[0], into: node.key, 0)
            default: break
            }
            result.append(node)
        }
        return result
    }

    /// The fade gains: `preroll` frames at 0 (the new graph runs, unheard), then a raised cosine over `frames` frames
    /// (the last index is 1).
    static func fadeGains(frames: Int, preroll: Int = 0) -> [Float] {
        [Float](repeating: 0, count: preroll) + (0...frames).map { RaisedCosine.gain($0, of: frames) }
    }

    /// `preroll`: frames during which the new graph already runs on the live input but is not heard yet, so that
    /// plugins starting cold (a convolver whose impulse response begins after a pre-delay) are warm when the fade
    /// begins.
    /// `spillover`: the old graph's tails ring out until quieter than `threshold` (linear), for at most `limit` frames
    /// after the fade.
    init(
        from old: CompiledGraph, to new: CompiledGraph, fadeFrames: Int, preroll: Int = 0,
        spillover: (threshold: Float, limit: Int)? = nil
    ) {
        let format = new.document.format
        guard
            let (nodes, outputs) = Self.union(
                old: old.document, new: new.document, kept: new.keptIDs, spillover: spillover != nil)
        else {
            preconditionFailure("the kept set was checked for cycles before the new graph was built")
        }
        let table = Self.fadeGains(frames: max(1, fadeFrames), preroll: max(0, preroll))
        gains = .allocateRender(capacity: table.count)
        gains.initialize(from: table, count: table.count)
        clock = .allocateRender(capacity: 1)
        clock.initialize(
            to: FadeClock(
                frames: table.count - 1, gains: gains,
                spillover: spillover.map { (max(0, preroll), $0.threshold, table.count - 1 + $0.limit) }))
        let kernelNodes = nodes.filter {
            switch $0.role {
            case .crossfade, .spill, .gate: return true
            case .old, .new: return false
            }
        }
        crossfadeCount = kernelNodes.count
        let crossfades = UnsafeMutablePointer<CrossfadeKernel>.allocateRender(capacity: max(1, crossfadeCount))
        crossfades.initialize(repeating: CrossfadeKernel(clock: clock), count: max(1, crossfadeCount))
        for (i, node) in kernelNodes.enumerated() {
            if case .spill = node.role { crossfades[i] = CrossfadeKernel(clock: clock, spills: true) }
        }
        self.crossfades = crossfades
        let index = Dictionary(uniqueKeysWithValues: nodes.enumerated().map { ($1.key, $0) })
        var nextCrossfade = 0
        let sources = nodes.map { node -> PlanStepSource in
            let kernel: RenderStep.Kernel
            switch node.role {
            case .old(let id): kernel = old.instances[id]!.kernel
            case .new(let id): kernel = new.instances[id]!.kernel
            case .crossfade, .spill, .gate:
                kernel = .crossfade(crossfades + nextCrossfade)
                nextCrossfade += 1
            }
            let inputs = node.inputs.map {
                $0.flatMap { s in index[s.key].map { PlanStepSource.Source(step: $0, bus: s.bus) } }
            }
            var meter: UnsafeMutablePointer<LevelMeter>?
            var tap: UnsafeMutablePointer<AnalysisTap>?
            if case .new(let id) = node.role {
                meter = new.meters.byNode[id]
                tap = new.meters.taps[id]
            }
            return PlanStepSource(kernel: kernel, inputs: inputs, outputs: node.outputs, meter: meter, tap: tap)
        }
        compiled = CompiledPlan(
            steps: sources,
            outputs: outputs.map {
                $0.flatMap { o in index[o.key].map { PlanStepSource.Source(step: $0, bus: o.bus) } }
            },
            channels: format.channels, maxFrames: format.maxFrames, outputMeters: new.meters.outputTable,
            outputTaps: new.meters.outputTaps)
        transition = .allocateRender(capacity: 1)
        transition.initialize(to: PlanTransition(plan: compiled.plan, next: new.plan, clock: clock))
    }

    deinit {
        transition.deallocateRender()
        crossfades.deallocateRender()
        clock.deallocateRender()
        gains.deallocateRender()
    }
}
