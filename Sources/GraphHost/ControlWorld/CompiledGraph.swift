/// A graph turned into a render plan plus the control-side instances that own the plan's memory.
/// Buses are preallocated planar Float32 buffers; a buffer is reused once the last step reading it has run.
public final class CompiledGraph {
    public let document: GraphDocument
    public let plan: RenderPlan
    /// Instances by node id.
    public let instances: [String: NodeInstance]
    /// Number of distinct bus buffers the plan uses (after reuse).
    public let busCount: Int
    private let busMemory: UnsafeMutablePointer<Float>
    private let inputTables: [UnsafeMutablePointer<UnsafeMutablePointer<Float>>]
    private var closed = false

    public var streams: [StreamInstance] { document.order.compactMap { instances[document.nodes[$0].id] as? StreamInstance } }

    public init(_ document: GraphDocument) throws {
        self.document = document
        let format = document.format
        var instances: [String: NodeInstance] = [:]
        do {
            for node in document.nodes { instances[node.id] = try node.definition.instantiate(id: node.id, format: format) }
        } catch {
            instances.values.forEach { $0.close() }
            throw error
        }
        self.instances = instances

        // Bus assignment: slot 0 is a silent bus for unconnected inputs. Each output bus takes a free slot;
        // a slot becomes free once the last step reading it has run, so it never aliases a step's own inputs.
        let position = Dictionary(uniqueKeysWithValues: document.order.enumerated().map { ($1, $0) })
        var lastUse: [Int: Int] = [:]      // producing node → last order position reading it
        for link in document.links { lastUse[link.from] = max(lastUse[link.from] ?? -1, position[link.to]!) }
        var free: [Int] = []
        var live: [(slot: Int, until: Int)] = []
        var slotCount = 1
        var slotOf: [Int: Int] = [:]
        for (p, n) in document.order.enumerated() where document.nodes[n].definition.outputBuses > 0 {
            free += live.filter { $0.until < p }.map(\.slot)
            live.removeAll { $0.until < p }
            let slot = free.popLast() ?? { slotCount += 1; return slotCount - 1 }()
            slotOf[n] = slot
            live.append((slot, lastUse[n] ?? p))
        }
        busCount = slotCount
        let busSize = format.channels * format.maxFrames
        let memory = UnsafeMutablePointer<Float>.allocate(capacity: slotCount * busSize)
        memory.initialize(repeating: 0, count: slotCount * busSize)
        busMemory = memory
        func bus(_ slot: Int) -> UnsafeMutablePointer<Float> { memory + slot * busSize }

        var tables: [UnsafeMutablePointer<UnsafeMutablePointer<Float>>] = []
        let steps = UnsafeMutableBufferPointer<RenderStep>.allocate(capacity: document.order.count)
        var outputBus = bus(0)
        for (p, n) in document.order.enumerated() {
            let node = document.nodes[n]
            let inputCount = node.definition.inputBuses
            let table = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: max(1, inputCount))
            table.initialize(repeating: bus(0), count: max(1, inputCount))
            for link in document.links where link.to == n { table[link.toBus] = bus(slotOf[link.from]!) }
            tables.append(table)
            let kernel = instances[node.id]!.kernel
            if case .output = kernel { outputBus = table[0] }
            (steps.baseAddress! + p).initialize(to: RenderStep(kernel: kernel, inputs: table, inputCount: inputCount,
                                                               output: slotOf[n].map { bus($0) }))
        }
        inputTables = tables
        let transport = UnsafeMutablePointer<Transport>.allocate(capacity: 1)
        transport.initialize(to: Transport(fadeFrames: Int(Self.transportFadeSeconds * Double(format.sampleRate))))
        plan = RenderPlan(steps: steps, channels: format.channels, maxFrames: format.maxFrames,
                          outputBus: outputBus, messages: .allocate(), transport: transport)
    }

    /// Starts the decoder threads.
    public func start() {
        for n in document.order { instances[document.nodes[n].id]!.start() }
    }

    private func instance(for command: Command) throws -> NodeInstance {
        guard let instance = instances[command.node] else {
            throw CommandError("no node '\(command.node)'; nodes: \(document.nodes.map(\.id).joined(separator: ", "))")
        }
        return instance
    }

    /// Throws the reason if `command` cannot apply to this graph; changes nothing.
    public func check(_ command: Command) throws {
        try instance(for: command).check(command.action)
    }

    /// True while a real-time thread renders the plan (set by `PipeWirePlayer`); commands then must not touch
    /// what the render thread is using.
    public var rendersConcurrently = false

    /// Sends a command's messages to the render world; on error nothing is sent.
    public func apply(_ command: Command) throws {
        try instance(for: command).perform(command.action, concurrent: rendersConcurrently) { message in
            guard plan.messages.push(message) else { throw CommandError("the control queue is full; try again") }
        }
    }

    /// Moves what plugins logged (possibly from the render thread) into swift-log.
    public func drainPluginLogs() {
        for case let plugin as LV2Instance in instances.values { plugin.drainLog() }
    }

    /// Latency in frames reported by each LV2 node that reports one (runs each such plugin once on silence:
    /// call before rendering starts).
    public func measuredPluginLatencies() -> [String: Float] {
        var result: [String: Float] = [:]
        for (id, instance) in instances {
            if let plugin = instance as? LV2Instance,
               let latency = plugin.measuredLatency(maxFrames: plan.maxFrames, channels: plan.channels) { result[id] = latency }
        }
        return result
    }

    /// Control output values (latency, meters) of each LV2 node, by node id and port symbol.
    public var pluginOutputs: [String: [String: Float]] {
        var result: [String: [String: Float]] = [:]
        for (id, instance) in instances { if let plugin = instance as? LV2Instance { result[id] = plugin.controlOutputs } }
        return result
    }

    /// The fade of `pause` and `play`.
    public static let transportFadeSeconds = 0.02

    /// Pauses (fade out, then nothing runs) or resumes (fade in) the whole graph.
    public func setPlaying(_ playing: Bool) throws {
        let message = ControlMessage(target: .output, parameter: playing ? Transport.playParameter : Transport.pauseParameter)
        guard plan.messages.push(message) else { throw CommandError("the control queue is full; try again") }
    }

    /// Stops background work and frees all memory; the plan must no longer be rendered.
    public func close() {
        guard !closed else { return }
        closed = true
        instances.values.forEach { $0.close() }
        plan.transport.deallocate()
        plan.messages.deallocate()
        plan.steps.deallocate()
        inputTables.forEach { $0.deallocate() }
        busMemory.deallocate()
    }

    deinit { close() }
}
