/// A graph turned into a render plan plus the control-side instances that own the plan's kernels.
/// A graph built to replace another may keep some of that graph's instances (same id, same type, settings
/// reachable by live commands); it then owns them, and the graph it replaced no longer closes them.
public final class CompiledGraph {
    /// The graph as it plays: live commands update its node definitions (`GraphSession.apply`).
    public internal(set) var document: GraphDocument
    /// Instances by node id.
    public let instances: [String: NodeInstance]
    /// Ids of the instances taken over from the graph this one replaces.
    public let keptIDs: Set<String>
    /// The slice length the graph's new instances were told they mostly run (`GraphFormat.nominalFrames`).
    public let nominalFrames: Int?
    let compiled: CompiledPlan
    /// The level meters the plan measures, by node id.
    let meters: GraphMeters
    private var released: Set<String> = []
    private var started = false
    private var closed = false

    /// True once `close` has run (its own instances stopped and freed).
    public var isClosed: Bool { closed }

    public var plan: RenderPlan { compiled.plan }
    /// Number of distinct bus buffers the plan uses (after reuse).
    /// Delays at mixers that align parallel paths, and the latency the graph adds; `updateCompensation` keeps it
    /// current while playing.
    public internal(set) var compensation = LatencyCompensation()

    public var busCount: Int { compiled.busCount }

    public var streams: [StreamInstance] { document.order.compactMap { instances[document.nodes[$0].id]?.mediaStream } }
    /// The `capture` and `sink` nodes, in render order.
    public var liveInputs: [LiveInputInstance] {
        document.order.compactMap { instances[document.nodes[$0].id]?.liveInput }
    }

    /// Instantiates every node (taking the instances of `keeping` for the ids in `keep`) and compiles the plan.
    /// `nominalFrames`: the slice length the graph will mostly run (`GraphFormat.nominalFrames`).
    public init(
        _ document: GraphDocument, keeping previous: CompiledGraph? = nil, keep: Set<String> = [],
        nominalFrames: Int? = nil
    ) throws {
        self.document = document
        self.nominalFrames = nominalFrames
        var format = document.format
        format.nominalFrames = nominalFrames
        var instances: [String: NodeInstance] = [:]
        var kept: Set<String> = []
        do {
            for node in document.nodes {
                if keep.contains(node.id), let old = previous?.instances[node.id] {
                    instances[node.id] = old
                    kept.insert(node.id)
                } else {
                    instances[node.id] = try node.definition.instantiate(id: node.id, format: format)
                }
            }
        } catch {
            for (id, instance) in instances where !kept.contains(id) { instance.close() }
            throw error
        }
        self.instances = instances
        keptIDs = kept
        // A plugin reports its latency from run(): new ones run once on silence before anything renders.
        for (id, instance) in instances where !kept.contains(id) {
            if let plugin = instance.hostedPlugin, plugin.reportsLatency {
                _ = plugin.measuredLatency(maxFrames: format.maxFrames, channels: format.channels)
            }
        }
        compensation = LatencyCompensation(document: document, instances: instances)
        for (id, instance) in instances where !kept.contains(id) {
            instance.compensate(compensation.delays[id] ?? [], format: format)
        }
        let meters = GraphMeters(document)
        self.meters = meters
        let steps = document.order.filter { !document.nodes[$0].definition.traits.contains(.isOutput) }
        let stepOf = Dictionary(uniqueKeysWithValues: steps.enumerated().map { ($1, $0) })
        let sources = steps.map { n -> PlanStepSource in
            let node = document.nodes[n]
            var inputs = [PlanStepSource.Source?](repeating: nil, count: node.definition.inputBuses)
            for link in document.links where link.to == n {
                inputs[link.toBus] = stepOf[link.from].map { PlanStepSource.Source(step: $0, bus: link.fromBus) }
            }
            return PlanStepSource(
                kernel: instances[node.id]!.kernel, inputs: inputs, outputs: node.definition.outputBuses,
                meter: meters.byNode[node.id], tap: meters.taps[node.id])
        }
        let outputs = document.outputIDs.map { id -> PlanStepSource.Source? in
            let n = document.node(id)!.index
            return document.links.first { $0.to == n }.flatMap { link in
                stepOf[link.from].map { PlanStepSource.Source(step: $0, bus: link.fromBus) }
            }
        }
        compiled = CompiledPlan(
            steps: sources, outputs: outputs, channels: format.channels, maxFrames: format.maxFrames,
            outputMeters: meters.outputTable, outputTaps: meters.outputTaps)
    }

    /// Starts background work (decoder and worker threads) of the instances this graph created.
    /// Live (a real-time thread renders) or offline, for the nodes that care (LV2 workers, lv2:freeWheeling, how an
    /// iPod EQ warms a new filter bank); nodes
    /// in `kept` are left as they are (they render already). Call before the graph renders.
    public func setRealTime(_ live: Bool, except kept: Set<String> = []) {
        for (id, instance) in instances where !kept.contains(id) { instance.setRealTime(live) }
    }

    public func start() {
        guard !started else { return }
        started = true
        for n in document.order where !keptIDs.contains(document.nodes[n].id) {
            instances[document.nodes[n].id]!.start()
        }
    }

    /// The instance a command addresses, or an error listing the node ids.
    public func instance(for command: NodeRequest) throws -> NodeInstance {
        guard let instance = instances[command.node] else {
            throw GraphChangeError.unknownNode(command.node, known: document.nodes.map(\.id))
        }
        return instance
    }

    /// Throws the reason if `command` cannot apply to this graph; changes nothing.
    public func check(_ command: NodeRequest) throws {
        try instance(for: command).check(command.action)
    }

    /// The id of the node whose kernel lives at `address` (see `RenderStep.Kernel.address`).
    public func nodeID(kernelAddress address: Int) -> String? {
        guard address != 0 else { return nil }
        return instances.first { Int(bitPattern: $0.value.kernel.address) == address }?.key
    }

    /// Slices silenced per LV2 node because the plugin output NaN, Inf or a burst above +24 dBFS (nodes with none left
    /// out).
    public var silencedSlices: [String: Int] {
        var result: [String: Int] = [:]
        for (id, instance) in instances {
            if let plugin = instance.hostedPlugin, plugin.silencedSlices > 0 { result[id] = plugin.silencedSlices }
        }
        return result
    }

    /// What happened to the helper processes of isolated plugins (crashes, hangs, restarts) per node, oldest first.
    public var pluginProcessEvents: [String: [String]] {
        instances.compactMapValues { $0.hostedPlugin?.processEvents }.filter { !$0.value.isEmpty }
    }

    /// Hands the instances for `ids` to the graph that replaces this one: `close` leaves them running.
    func release(_ ids: Set<String>) { released.formUnion(ids) }

    /// Moves what plugins logged (possibly from the render thread) into swift-log.
    public func drainPluginLogs() {
        for instance in instances.values { instance.hostedPlugin?.drainLog() }
    }

    /// Latency in frames reported by each LV2 node that reports one (runs each such plugin once on silence:
    /// call before rendering starts).
    public func measuredPluginLatencies() -> [String: Float] {
        var result: [String: Float] = [:]
        for (id, instance) in instances {
            if let plugin = instance.hostedPlugin,
                let latency = plugin.measuredLatency(maxFrames: plan.maxFrames, channels: plan.channels)
            {
                result[id] = latency
            }
        }
        return result
    }

    /// The values given to each LV2 node's properties (patch:Set), by node id and property symbol.
    public var pluginProperties: [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        for (id, instance) in instances {
            if let plugin = instance.hostedPlugin, !plugin.propertyValues.isEmpty { result[id] = plugin.propertyValues }
        }
        return result
    }

    /// Control output values (latency, meters) of each LV2 node, by node id and port symbol.
    public var pluginOutputs: [String: [String: Float]] {
        var result: [String: [String: Float]] = [:]
        for (id, instance) in instances { if let plugin = instance.hostedPlugin { result[id] = plugin.controlOutputs } }
        return result
    }

    /// Stops background work and frees the instances this graph still owns; the plan must no longer be rendered.
    public func close() {
        guard !closed else { return }
        closed = true
        for (id, instance) in instances where !released.contains(id) { instance.close() }
    }

    deinit { close() }
}
