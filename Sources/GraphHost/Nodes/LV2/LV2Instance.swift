import Atomics
import CCleanAllocationGlue
import CLV2
import CLilv
import FoundationEssentials
import Glibc
import Logging

/// A running `lv2` node: its lilv instances (activated here, in the control world), the memory its
/// kernel reads, and the translation of `set`/`preset` commands into control messages.
final class LV2Instance: NodeInstance, HostedPlugin {
    let id: String
    let node: LV2Node
    let features: LV2Features
    var instances: [UnsafeMutablePointer<LilvInstance>] = []
    let kernelPointer: UnsafeMutablePointer<LV2Kernel>
    let workers: UnsafeMutablePointer<LV2WorkerChannel>
    let workerThread: LV2WorkerThread?
    /// Each copy's options interface (empty when the plugin has none).
    private var optionsInterfaces: [UnsafePointer<LV2_Options_Interface>] = []
    /// Each copy's NULL-terminated feature list for state restores (its worker:schedule is the restore one).
    private var restoreFeatureLists: [UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>] = []
    private let wet: UnsafeMutablePointer<SmoothedGain>
    private let paused: UnsafeAtomic<Bool>
    private let runsWhenSilent: UnsafeMutablePointer<Bool>
    private var bypassed = false
    /// The fade before a state restore that is not thread-safe, and after it.
    static let fadeSeconds = 0.02
    private var allocations: [UnsafeMutableRawPointer] = []
    static let logger = Logger(label: "graphhost.lv2")

    init(id: String, node: LV2Node, format: GraphFormat) throws {
        self.id = id
        self.node = node
        let plugin = node.plugin
        features = LV2Features(
            sampleRate: format.sampleRate, nominalFrames: format.nominalBlockLength, maxFrames: format.maxFrames)
        let copies = node.copies
        let portCount = plugin.ports.count
        var owned: [UnsafeMutableRawPointer] = []
        var created: [UnsafeMutablePointer<LilvInstance>] = []
        var interfaces: [UnsafePointer<LV2_Options_Interface>] = []
        func alloc<T>(_ type: T.Type, _ count: Int) -> UnsafeMutablePointer<T> {
            let p = UnsafeMutablePointer<T>.allocateRender(capacity: max(1, count))
            owned.append(UnsafeMutableRawPointer(p))
            return p
        }
        let handles = alloc(LV2_Handle?.self, copies)
        let descriptors = alloc(UnsafePointer<LV2_Descriptor>.self, copies)
        let audioIns = node.mainInputs
        let audioOuts = node.mainOutputs
        let audioInputs = alloc(UInt32.self, copies * audioIns.count)
        let audioOutputs = alloc(UInt32.self, copies * audioOuts.count)
        var downmix: UnsafeMutablePointer<Float>?
        if copies == 1 && audioIns.count == 1 && format.channels > 1 {
            downmix = alloc(Float.self, format.maxFrames)
            downmix!.initialize(repeating: 0, count: format.maxFrames)
        }
        let controls = alloc(Float.self, copies * portCount)
        controls.initialize(repeating: 0, count: max(1, copies * portCount))
        let atomPorts = plugin.ports.filter { $0.kind == .atom }
        let atomCount = copies * atomPorts.count
        let atomBuffers = alloc(UnsafeMutablePointer<LV2_Atom_Sequence>.self, atomCount)
        let atomIsInput = alloc(Bool.self, atomCount)
        let atomCapacities = alloc(UInt32.self, atomCount)
        let silence = alloc(Float.self, format.maxFrames)
        silence.initialize(repeating: 0, count: format.maxFrames)
        let scratch = alloc(Float.self, format.maxFrames)
        scratch.initialize(repeating: 0, count: format.maxFrames)

        let workers = UnsafeMutablePointer<LV2WorkerChannel>.allocateRender(capacity: copies)
        // Each copy has two worker:schedule features: the run-time one for its run(), and one for state restores,
        // which the control world makes while run() may be going on.
        let schedules = alloc(LV2_Worker_Schedule.self, 2 * copies)
        let scheduleFeatures = alloc(LV2_Feature.self, 2 * copies)
        for copy in 0..<copies {
            (workers + copy).initialize(to: .allocate())
            (schedules + copy).initialize(
                to: LV2_Worker_Schedule(
                    handle: UnsafeMutableRawPointer(workers + copy),
                    schedule_work: { handle, size, data in
                        LV2WorkerChannel.schedule(handle, size: size, data: data)
                    }))
            (schedules + copies + copy).initialize(
                to: LV2_Worker_Schedule(
                    handle: UnsafeMutableRawPointer(workers + copy),
                    schedule_work: { handle, size, data in
                        LV2WorkerChannel.scheduleForRestore(handle, size: size, data: data)
                    }))
        }
        var restoreLists: [UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>] = []
        func releaseWorkers() {
            for copy in 0..<copies { workers[copy].deallocate() }
            workers.deallocateRender()
        }
        for copy in 0..<copies {
            let featureList = features.array(scheduling: schedules + copy, feature: scheduleFeatures + copy)
            owned.append(UnsafeMutableRawPointer(featureList))
            let restoreList = features.array(
                scheduling: schedules + copies + copy, feature: scheduleFeatures + copies + copy)
            owned.append(UnsafeMutableRawPointer(restoreList))
            restoreLists.append(restoreList)
            // From instantiate to activate the plugin's allocations arrive zeroed (see clean_allocation_glue.h).
            gh_zero_new_memory(1)
            defer { gh_zero_new_memory(0) }
            let made = LV2World.shared.withPlugin(plugin.uri) { _, plugin in
                lilv_plugin_instantiate(plugin, Double(format.sampleRate), featureList)
            }
            guard let made, let instance = made else {
                releaseWorkers()
                features.drainLog(to: Self.logger, plugin: node.uri)
                created.forEach { lilv_instance_free($0) }
                owned.forEach { $0.deallocateRender() }
                throw NodeCommandError.failed("LV2 plugin \(node.uri) failed to instantiate (node '\(id)')")
            }
            created.append(instance)
            let descriptor = lilv_instance_get_descriptor(instance)!
            handles[copy] = lilv_instance_get_handle(instance)
            descriptors[copy] = descriptor
            workers[copy].handle = handles[copy]
            if let ext = lilv_instance_get_extension_data(instance, "http://lv2plug.in/ns/ext/worker#interface") {
                workers[copy].interface = ext.assumingMemoryBound(to: LV2_Worker_Interface.self)
            }
            if let ext = lilv_instance_get_extension_data(instance, "http://lv2plug.in/ns/ext/options#interface"),
                ext.assumingMemoryBound(to: LV2_Options_Interface.self).pointee.set != nil
            {
                interfaces.append(UnsafePointer(ext.assumingMemoryBound(to: LV2_Options_Interface.self)))
            }
            for (i, port) in audioIns.enumerated() { audioInputs[copy * audioIns.count + i] = UInt32(port) }
            for (i, port) in audioOuts.enumerated() { audioOutputs[copy * audioOuts.count + i] = UInt32(port) }
            let values = controls + copy * portCount
            for port in plugin.ports {
                let index = UInt32(port.index)
                switch port.kind {
                case .control:
                    // Until `setRealTime(true)` the instance renders offline: lv2:freeWheeling reads 1.
                    let offline: Float? = port.designation == LV2URI.freeWheeling ? 1 : nil
                    values[port.index] = port.isInput ? (offline ?? node.controlValues[port.index] ?? 0) : 0
                    lilv_instance_connect_port(instance, index, values + port.index)
                case .atom:
                    let a = copy * atomPorts.count + atomPorts.firstIndex { $0.index == port.index }!
                    let size = max(port.minimumSize, LV2Features.sequenceSize)
                    let raw = UnsafeMutableRawPointer.allocateRender(byteCount: size, alignment: 16)
                    raw.initializeMemory(as: UInt8.self, repeating: 0, count: size)
                    owned.append(raw)
                    atomBuffers[a] = raw.assumingMemoryBound(to: LV2_Atom_Sequence.self)
                    atomIsInput[a] = port.isInput
                    atomCapacities[a] = UInt32(size)
                    lilv_instance_connect_port(instance, index, raw)
                case .audio:
                    // Main audio ports are connected every cycle by the kernel; sidechains read silence.
                    lilv_instance_connect_port(instance, index, port.isInput ? silence : scratch)
                case .cv:
                    // A CV input holds its default value in every sample; a CV output writes to scratch.
                    guard port.isInput else {
                        lilv_instance_connect_port(instance, index, scratch)
                        break
                    }
                    let signal = alloc(Float.self, format.maxFrames)
                    signal.initialize(repeating: port.defaultValue ?? 0, count: format.maxFrames)
                    lilv_instance_connect_port(instance, index, signal)
                case .other:
                    lilv_instance_connect_port(instance, index, nil)
                }
            }
            // Default state, then the preset's state, restored before activation (no render thread yet).
            for stateURI in (plugin.wantsDefaultState ? [node.uri] : []) + [node.presetURI].compactMap({ $0 }) {
                LV2World.shared.withState(stateURI) { state in
                    lilv_state_restore(state, instance, nil, nil, 0, restoreList)
                }
            }
            lilv_instance_activate(instance)
        }
        features.drainLog(to: Self.logger, plugin: node.uri)
        let wet = UnsafeMutablePointer<SmoothedGain>.allocateRender(capacity: 2)
        wet.initialize(repeating: SmoothedGain(1), count: 2)
        let paused = UnsafeAtomic<Bool>.create(false)
        let runsWhenSilent = UnsafeMutablePointer<Bool>.allocateRender(capacity: 1)
        runsWhenSilent.initialize(to: false)
        self.runsWhenSilent = runsWhenSilent
        self.wet = wet
        self.paused = paused
        kernelPointer = .allocateRender(capacity: 1)
        kernelPointer.initialize(
            to: LV2Kernel(
                copies: copies, handles: handles, descriptors: descriptors, audioInputs: audioInputs,
                audioOutputs: audioOutputs,
                inputsPerCopy: audioIns.count, outputsPerCopy: audioOuts.count, downmix: downmix, controls: controls,
                portCount: portCount, atomBuffers: atomBuffers,
                atomIsInput: atomIsInput, atomCapacities: atomCapacities, atomCount: atomCount,
                sequenceType: URIDMap.shared.map("http://lv2plug.in/ns/ext/atom#Sequence"),
                chunkType: URIDMap.shared.map("http://lv2plug.in/ns/ext/atom#Chunk"),
                workers: workers[0].interface == nil ? nil : workers, wet: wet, paused: paused,
                fadeSamples: Int(Self.fadeSeconds * Double(format.sampleRate)), runsWhenSilent: runsWhenSilent,
                silencedSlices: .create(0)))
        let connected = alloc(UnsafeMutableRawPointer?.self, copies * portCount)
        connected.initialize(repeating: nil, count: max(1, copies * portCount))
        kernelPointer.pointee.connected = connected
        restoreFeatureLists = restoreLists
        optionsInterfaces = interfaces.count == copies ? interfaces : []
        self.workers = workers
        workerThread = workers[0].interface == nil ? nil : LV2WorkerThread(channels: workers, count: copies)
        instances = created
        if !node.portInputs.isEmpty {
            let feeds = alloc(LV2Kernel.PortFeed.self, node.portInputs.count)
            for (k, input) in node.portInputs.enumerated() {
                (feeds + k).initialize(to: LV2Kernel.PortFeed(port: UInt32(input.port), channel: input.channel ?? -1))
            }
            let signals = alloc(Float.self, node.portInputs.count * format.maxFrames)
            signals.initialize(repeating: 0, count: node.portInputs.count * format.maxFrames)
            kernelPointer.pointee.portFeeds = feeds
            kernelPointer.pointee.portFeedCount = node.portInputs.count
            kernelPointer.pointee.portSignals = signals
        }
        if !node.portOutputs.isEmpty, let instance = created.first {
            // Output ports linked by name write to buffers of their own, or are main outputs already on the bus.
            let own = Array(Set(node.portOutputs.flatMap(\.ports)).subtracting(audioOuts)).sorted()
            let signals = alloc(Float.self, own.count * format.maxFrames)
            signals.initialize(repeating: 0, count: max(1, own.count * format.maxFrames))
            for (k, port) in own.enumerated() {
                lilv_instance_connect_port(instance, UInt32(port), signals + k * format.maxFrames)
            }
            let sources = alloc(Int.self, node.portOutputs.count * format.channels)
            for (k, output) in node.portOutputs.enumerated() {
                for c in 0..<format.channels {
                    let port = output.ports[min(c, output.ports.count - 1)]
                    sources[k * format.channels + c] =
                        own.firstIndex(of: port) ?? (-1 - audioOuts.firstIndex(of: port)!)
                }
            }
            kernelPointer.pointee.portOutputCount = node.portOutputs.count
            kernelPointer.pointee.portOutputSources = sources
            kernelPointer.pointee.portOutputSignals = signals
        }
        if plugin.readsEvents, let midi = plugin.midiInput,
            let index = atomPorts.firstIndex(where: { $0.index == midi.index })
        {
            let silent = alloc(Float.self, format.channels * format.maxFrames)
            silent.initialize(repeating: 0, count: format.channels * format.maxFrames)
            kernelPointer.pointee.readsMIDI = true
            kernelPointer.pointee.midiPort = index
            kernelPointer.pointee.atomPortsPerCopy = atomPorts.count
            kernelPointer.pointee.silence = silent
            kernelPointer.pointee.eventCapacity = format.channels * format.maxFrames * MemoryLayout<Float>.size
        }
        if let bus = node.portInputs.firstIndex(where: \.carriesEvents),
            let index = atomPorts.firstIndex(where: { $0.index == node.portInputs[bus].port })
        {
            kernelPointer.pointee.eventBus = bus
            kernelPointer.pointee.midiPort = index
            kernelPointer.pointee.atomPortsPerCopy = atomPorts.count
            kernelPointer.pointee.eventCapacity = format.channels * format.maxFrames * MemoryLayout<Float>.size
        }
        if plugin.sendsEvents, let out = plugin.midiOutput {
            kernelPointer.pointee.midiOutPort = atomPorts.firstIndex { $0.index == out.index } ?? -1
            kernelPointer.pointee.eventCapacity = format.channels * format.maxFrames * MemoryLayout<Float>.size
        }
        if !plugin.properties.isEmpty, let control = plugin.controlAtomInput,
            let index = atomPorts.firstIndex(where: { $0.index == control.index })
        {
            let ring = ByteRing.allocate(capacity: 1 << 16)
            patchMessages = ring
            kernelPointer.pointee.patchMessages = ring
            kernelPointer.pointee.messageScratch = UnsafeMutableRawPointer(
                alloc(UInt8.self, LV2Kernel.messageScratchSize))
            kernelPointer.pointee.controlSequence = index
            kernelPointer.pointee.atomPortsPerCopy = atomPorts.count
            let outputs = atomPorts.indices.filter { !atomPorts[$0].isInput && !atomPorts[$0].supportsMIDI }
            if let notify = outputs.first(where: { atomPorts[$0].designation == LV2URI.controlDesignation })
                ?? outputs.first
            {
                let reports = ByteRing.allocate(capacity: 1 << 16)
                self.reports = reports
                kernelPointer.pointee.reports = reports
                kernelPointer.pointee.notifyPort = notify
                kernelPointer.pointee.objectType = URIDMap.shared.map(LV2URI.atomObject)
                kernelPointer.pointee.patchSetType = URIDMap.shared.map(LV2URI.patchSet)
            }
        }
        if let position = plugin.positionInput, let index = atomPorts.firstIndex(where: { $0.index == position.index })
        {
            let seen = alloc(Int.self, 1)
            seen.initialize(to: 0)
            let map = URIDMap.shared
            func time(_ name: String) -> UInt32 { map.map("http://lv2plug.in/ns/ext/time#" + name) }
            var u = LV2Kernel.PositionURIDs()
            (u.object, u.position, u.long, u.float, u.int) = (
                map.map(LV2URI.atomObject), time("Position"), map.map(LV2URI.atomLong),
                map.map(LV2URI.atomFloat), map.map(LV2URI.atomInt)
            )
            (u.frame, u.speed, u.bar, u.barBeat) = (time("frame"), time("speed"), time("bar"), time("barBeat"))
            (u.beatUnit, u.beatsPerBar, u.beatsPerMinute) = (
                time("beatUnit"), time("beatsPerBar"), time("beatsPerMinute")
            )
            kernelPointer.pointee.positionPort = index
            kernelPointer.pointee.positionSeen = seen
            kernelPointer.pointee.positionScratch = UnsafeMutableRawPointer(
                alloc(UInt64.self, LV2Kernel.positionSize / 8))
            kernelPointer.pointee.positionURIDs = u
            kernelPointer.pointee.atomPortsPerCopy = atomPorts.count
        }
        allocations = owned
        if let patchMessages, reports != nil {
            // Ask for every property's value (patch:Get); the plugin answers on its notify port at its first run.
            _ = PatchMessage.get().withUnsafeBytes { patchMessages.write($0.baseAddress!, size: $0.count) }
        }
        if !node.propertyValues.isEmpty {
            // The graph file's property values take effect before the first slice: the plugin runs on silence once to
            // read them (its worker runs in place here) and once more to take the worker's answer.
            for (symbol, text) in node.propertyValues.sorted(by: { $0.key < $1.key }) {
                try setProperty(symbol, to: text, concurrent: false, send: { _ in })
            }
            for _ in 0..<2 { runOnSilence(maxFrames: format.maxFrames, channels: format.channels) }
        }
    }

    /// The patch:Set ring of the kernel; nil when the plugin has no properties.
    private var patchMessages: ByteRing?
    /// The patch:Set objects the plugin reported on its notify port; nil when it has none.
    private var reports: ByteRing?
    /// Whether the node was given a file (an atom:Path property), which it loads as it starts.
    var loadsFiles: Bool {
        node.plugin.properties.contains { $0.range == LV2URI.atomPath && node.propertyValues[$0.symbol] != nil }
    }

    /// The value last given to each property, as text.
    private(set) var propertyValues: [String: String] = [:]

    /// Takes the property values the plugin reported (patch:Set on its notify port) into `propertyValues`.
    func drainReports() {
        guard let reports else { return }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 8192, alignment: 8)
        defer { buffer.deallocate() }
        while let size = reports.read(into: buffer, capacity: 8192) {
            guard let (uri, text) = PatchMessage.parseSet(UnsafeRawBufferPointer(start: buffer, count: size)) else {
                continue
            }
            let symbol =
                node.plugin.properties.first { $0.uri == uri }?.symbol
                ?? String(uri.split(whereSeparator: { $0 == "#" || $0 == "/" }).last ?? Substring(uri))
            propertyValues[symbol] = text
        }
    }

    /// Queues a patch:Set for `symbol`'s property; it reaches the plugin at the start of the next run. A file property
    /// of a plugin that takes paths only through state (`takesPathsThroughState`) is restored as state instead.
    func setProperty(_ symbol: String, to text: String, concurrent: Bool, send: (ControlMessage) throws -> Void) throws
    {
        let message = try propertyMessage(symbol, text)
        if node.plugin.takesPathsThroughState,
            let property = node.plugin.properties.first(where: { $0.symbol == symbol }),
            property.range == LV2URI.atomPath
        {
            try restoreState(concurrent: concurrent, send: send, what: "property '\(symbol)'") { restore in
                LV2World.shared.withPathState(plugin: node.uri, key: property.uri, path: text, restore)
            }
            propertyValues[symbol] = text
            return
        }
        guard let patchMessages, message.withUnsafeBytes({ patchMessages.write($0.baseAddress!, size: $0.count) })
        else {
            throw NodeCommandError.failed("'\(id)': the property queue is full; try again")
        }
        propertyValues[symbol] = text
    }

    /// The message setting a property, or the reason it cannot be built.
    func propertyMessage(_ symbol: String, _ text: String) throws -> [UInt8] {
        guard let property = node.plugin.properties.first(where: { $0.symbol == symbol }) else {
            throw NodeCommandError.unknownParameter(
                node: "'\(id)' (\(node.uri))", parameter: ParameterID(symbol), noun: "control or property",
                known: "controls: \(node.plugin.controlInputs.map(\.symbol).joined(separator: ", "))"
                    + (node.plugin.properties.isEmpty
                        ? "" : "; properties: \(node.plugin.properties.map(\.symbol).joined(separator: ", "))"))
        }
        let message = try PatchMessage.set(property, text: text)
        guard message.count <= LV2Kernel.messageScratchSize - 64 else {
            throw NodeCommandError.invalidValue("\(symbol): the value is too long")
        }
        return message
    }

    /// Whether `command` sets a property rather than a control port.
    func isProperty(_ command: NodeCommand) -> Bool {
        switch command {
        case .set(let parameter, _), .choose(let parameter, _):
            let symbol = parameter.description
            return !node.plugin.controlInputs.contains { $0.symbol == symbol }
                && node.plugin.properties.contains { $0.symbol == symbol }
        default:
            return false
        }
    }

    /// The value text of a property command.
    static func text(of command: NodeCommand) -> (symbol: String, text: String)? {
        switch command {
        case .set(let parameter, let value): return (parameter.description, Format.number(value))
        case .choose(let parameter, let label): return (parameter.description, label)
        default: return nil
        }
    }

    var kernel: RenderStep.Kernel { .lv2(kernelPointer) }

    func start() { workerThread?.start() }

    /// Live (a real-time thread renders) or offline: live, work goes to the worker thread and lv2:freeWheeling ports
    /// read 0; offline, work runs in place (deterministic renders) and they read 1. Call while nothing renders.
    func setRealTime(_ live: Bool) {
        let kernel = kernelPointer.pointee
        for copy in 0..<node.copies {
            workers[copy].runsWorkInPlace = !live
            for port in node.plugin.ports
            where port.kind == .control && port.isInput && port.designation == LV2URI.freeWheeling {
                kernel.controls[copy * kernel.portCount + port.index] = live ? 0 : 1
            }
        }
    }

    /// Waits until the plugin's worker has answered every request made so far (true at once without a worker).
    func waitForWorker(timeout: TimeInterval = 10) -> Bool { workerThread?.waitUntilIdle(timeout: timeout) ?? true }

    var parameters: [ParameterDescriptor] { node.descriptor.parameters }

    var presetNames: [String] { node.descriptor.presets }

    var hostedPlugin: (any HostedPlugin)? { self }

    var reportsLatency: Bool { node.plugin.latencyPort != nil }

    private var reportedNonFinite = 0

    /// Moves what the plugin logged into swift-log, and reports slices silenced for NaN, Inf or a burst above +24 dBFS.
    func drainLog() {
        features.drainLog(to: Self.logger, plugin: node.uri)
        drainReports()
        reportedNonFinite = reportSilenced(node: id, plugin: node.uri, since: reportedNonFinite, to: Self.logger)
    }

    /// Slices silenced because the plugin output NaN, Inf or a burst above +24 dBFS.
    var silencedSlices: Int { kernelPointer.pointee.silencedSlices.load(ordering: .relaxed) }

    /// Control output values (latency, meters) of the first instance, by symbol.
    var controlOutputs: [String: Float] {
        let k = kernelPointer.pointee
        return Dictionary(
            uniqueKeysWithValues: node.plugin.ports.filter { $0.kind == .control && !$0.isInput }
                .map { ($0.symbol, k.controls[$0.index]) })
    }

    /// The latency the plugin reports now (lv2:reportsLatency), in frames: the port value of its latest run, a word
    /// the render thread writes (a read may see the value of the run before, never a torn one).
    /// A plugin without audio inputs (an instrument, a generator) may sound with nothing at its inputs.
    var mayMakeSoundUnprompted: Bool { node.mainInputs.isEmpty }

    var latency: Int {
        guard let port = node.plugin.latencyPort else { return 0 }
        let value = kernelPointer.pointee.controls[port.index]
        return value.isFinite ? max(0, Int(value.rounded())) : 0
    }

    /// The latency the plugin reports (lv2:reportsLatency), measured by running it once on silence
    /// before any rendering (control world; CompiledGraph does it for latency compensation).
    func measuredLatency(maxFrames: Int, channels: Int) -> Float? {
        guard let port = node.plugin.latencyPort else { return nil }
        runOnSilence(maxFrames: maxFrames, channels: channels)
        return kernelPointer.pointee.controls[port.index]
    }

    /// Runs the plugin once on 256 frames of silence (control world, before anything renders it).
    func runOnSilence(maxFrames: Int, channels: Int) {
        let frames = min(256, maxFrames)
        let input = UnsafeMutablePointer<Float>.allocate(capacity: channels * frames)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: channels * frames)
        defer {
            input.deallocate()
            output.deallocate()
        }
        input.initialize(repeating: 0, count: channels * frames)
        kernelPointer.pointee.process(
            input: input, output: output, channelStride: frames, channels: channels, frames: frames)
    }

    /// Port values a command sets, clamped; throws the reason when it does not fit.
    func targets(of command: NodeCommand) throws -> [(port: Int, value: Float)] {
        let plugin = node.plugin
        switch command {
        case .set(let parameter, let value):
            let symbol = parameter.description
            let port = try control(symbol)
            let fitted = port.conform(Float(value))
            if fitted != Float(value) {
                Self.logger.warning(
                    "\(id).\(symbol): \(Format.number(value)) is not \(port.rangeText); using \(Format.number(fitted))")
            }
            return [(port.index, fitted)]
        case .choose(let parameter, let label):
            let symbol = parameter.description
            let port = try control(symbol)
            return [(port.index, try port.value(named: label, node: id, parameter: parameter))]
        case .bypass:
            return []
        case .seek:
            throw NodeCommandError.seekNotSupported(node: id)
        case .preset(let name):
            guard let preset = plugin.preset(name) else {
                throw NodeCommandError.unknownPreset(node: id, name: name, known: plugin.presets.map(\.label))
            }
            return plugin.portValues(of: preset).compactMap { symbol, value in
                plugin.controlInputs.first { $0.symbol == symbol }.map { ($0.index, $0.conform(value)) }
            }
        }
    }

    /// The input control port with this symbol.
    func control(_ symbol: String) throws -> LV2Port {
        guard let port = node.plugin.controlInputs.first(where: { $0.symbol == symbol }) else {
            throw NodeCommandError.unknownParameter(
                node: "'\(id)' (\(node.uri))", parameter: ParameterID(symbol), noun: "control",
                known: "controls: \(node.plugin.controlInputs.map(\.symbol).joined(separator: ", "))")
        }
        return port
    }

    func check(_ command: NodeCommand) throws {
        if isProperty(command), let (symbol, text) = Self.text(of: command) {
            _ = try propertyMessage(symbol, text)
            return
        }
        _ = try targets(of: command)
    }

    func messages(for command: NodeCommand) throws -> [ControlMessage] {
        if case .bypass(let on) = command {
            bypassed = on
            return [.kernel(.lv2(kernelPointer, .bypass(on)))]
        }
        return try targets(of: command).map { .kernel(.lv2(kernelPointer, .control(port: $0.port, value: $0.value))) }
    }

    func close() {
        workerThread?.stop()
        for instance in instances {
            lilv_instance_deactivate(instance)
            lilv_instance_free(instance)
        }
        features.drainLog(to: Self.logger, plugin: node.uri)
        instances = []
        kernelPointer.pointee.silencedSlices.destroy()
        patchMessages?.deallocate()
        reports?.deallocate()
        kernelPointer.deinitialize(count: 1).deallocateRender()
        allocations.forEach { $0.deallocateRender() }
        allocations = []
        for copy in 0..<node.copies { workers[copy].deallocate() }
        workers.deallocateRender()
        wet.deallocateRender()
        paused.destroy()
        runsWhenSilent.deallocateRender()
    }

    /// Applies a command. A preset that carries state besides port values is restored here, in the control
    /// world: directly when nothing renders concurrently or the plugin declares state:threadSafeRestore, else
    /// after the kernel has faded the plugin out (input passes through meanwhile), fading it back in afterwards.
    func perform(_ command: NodeCommand, concurrent: Bool, send: (ControlMessage) throws -> Void) throws {
        if isProperty(command), let (symbol, text) = Self.text(of: command) {
            return try setProperty(symbol, to: text, concurrent: concurrent, send: send)
        }
        let portMessages = try messages(for: command)
        guard case .preset(let name) = command, let preset = node.plugin.preset(name) else {
            try portMessages.forEach(send)
            return
        }
        let carriesState = LV2World.shared.withState(preset.uri) { lilv_state_get_num_properties($0) > 0 } ?? false
        guard carriesState else {
            try portMessages.forEach(send)
            return
        }
        try restoreState(concurrent: concurrent, send: send, what: "preset '\(preset.label)'") { restore in
            LV2World.shared.withState(preset.uri, restore)
        }
        try portMessages.forEach(send)
    }

    /// Restores a state into every instance, in the control world: directly when nothing renders concurrently or the
    /// plugin declares state:threadSafeRestore, else after the kernel has faded the plugin out (input passes through
    /// meanwhile), fading it back in afterwards. `withState` hands the state to its closure.
    func restoreState(
        concurrent: Bool, send: (ControlMessage) throws -> Void, what: String,
        withState: ((OpaquePointer) -> Void) -> Void?
    ) throws {
        var restored: Void?
        try whilePaused(concurrent && !node.plugin.supportsThreadSafeRestore, send: send, what: what) {
            restored = withState { state in
                for (copy, instance) in instances.enumerated() {
                    lilv_state_restore(state, instance, nil, nil, 0, restoreFeatureLists[copy])
                }
            }
        }
        if restored == nil { throw NodeCommandError.failed("'\(id)': the state for \(what) could not be made") }
    }

    /// Whether the plugin keeps state of its own (the state interface), beyond its ports and properties.
    var keepsState: Bool {
        instances.first.map { lilv_instance_get_extension_data($0, "http://lv2plug.in/ns/ext/state#interface") != nil }
            ?? false
    }

    /// The plugin's own state, per instance, as Turtle (its state interface's properties; port values are the node's
    /// settings): what an isolated plugin's host keeps to restore after a restart. Nil when it keeps none. Saving
    /// may run beside run() (LV2 state's own threading class).
    func savedStates() -> [String]? {
        guard keepsState else { return nil }
        var texts: [String] = []
        for (copy, instance) in instances.enumerated() {
            let text = LV2World.shared.withPlugin(node.uri) { world, plugin -> String? in
                let flags = UInt32(LV2_STATE_IS_POD.rawValue | LV2_STATE_IS_PORTABLE.rawValue)
                guard
                    let state = lilv_state_new_from_instance(
                        plugin, instance, URIDMap.shared.mapFeature, nil, nil, nil, nil, nil, nil, flags,
                        restoreFeatureLists[copy])
                else { return nil }
                defer { lilv_state_free(state) }
                guard
                    let text = lilv_state_to_string(
                        world, URIDMap.shared.mapFeature, URIDMap.shared.unmapFeature, state,
                        "urn:graphhost:saved-state", nil)
                else { return nil }
                defer { lilv_free(text) }
                return String(cString: text)
            }
            guard let text = text ?? nil else { return nil }
            texts.append(text)
        }
        return texts
    }

    /// Restores what `savedStates()` gave into each instance (before it renders, or paused while it does).
    func restore(savedStates texts: [String], concurrent: Bool, send: (ControlMessage) throws -> Void) throws {
        guard texts.count == instances.count else {
            throw NodeCommandError.failed("'\(id)': the saved state is for \(texts.count) instance(s)")
        }
        var restored: Void?
        try whilePaused(concurrent && !node.plugin.supportsThreadSafeRestore, send: send, what: "its saved state") {
            restored = LV2World.shared.withWorld { world -> Void? in
                for (copy, instance) in instances.enumerated() {
                    guard let state = lilv_state_new_from_string(world, URIDMap.shared.mapFeature, texts[copy])
                    else { return nil }
                    lilv_state_restore(state, instance, nil, nil, 0, restoreFeatureLists[copy])
                    lilv_state_free(state)
                }
                return ()
            }
        }
        if restored == nil { throw NodeCommandError.failed("'\(id)': its saved state could not be read") }
    }

    /// The block length the plugin was told it runs most of the time (bufsz:nominalBlockLength).
    var nominalBlockLength: Int { features.nominalBlockLength }

    /// Whether the plugin takes a new nominal block length while it lives (it has the options interface); one
    /// without it is told by a new instance.
    var takesNominalBlockLength: Bool { !optionsInterfaces.isEmpty }

    /// Tells every instance a new nominal block length through its options interface, in the control world: at once
    /// when nothing renders concurrently, else while the kernel has the plugin faded out, since set() may not run
    /// beside run() (LV2's instantiation threading class). False when an instance's set() refused it (a plugin that
    /// declares the interface but not the option): the length it was told stays the old one, so it is made afresh.
    func setNominalBlockLength(_ frames: Int, concurrent: Bool, send: (ControlMessage) throws -> Void) throws -> Bool {
        let before = features.nominalBlockLength
        var accepted = true
        try whilePaused(concurrent, send: send, what: "the block length \(frames)") {
            let options = features.settingNominalBlockLength(frames)
            for (copy, interface) in optionsInterfaces.enumerated() {
                let status = options.withUnsafeBufferPointer {
                    interface.pointee.set!(lilv_instance_get_handle(instances[copy]), $0.baseAddress)
                }
                if status != LV2_OPTIONS_SUCCESS.rawValue { accepted = false }
            }
            if !accepted { _ = features.settingNominalBlockLength(before) }
        }
        if !accepted {
            Self.logger.info("'\(id)' refused the block length \(frames) through its options; it is made afresh")
        }
        return accepted
    }

    /// Runs `body` in the control world, with the plugin faded out and no longer run when `mustPause` (input passes
    /// through meanwhile), fading it back in afterwards.
    func whilePaused(_ mustPause: Bool, send: (ControlMessage) throws -> Void, what: String, _ body: () -> Void) throws
    {
        if mustPause {
            try send(.kernel(.lv2(kernelPointer, .pause)))
            let deadline = Date().addingTimeInterval(2)
            while !paused.load(ordering: .acquiring) {
                guard Date() < deadline else {
                    try send(.kernel(.lv2(kernelPointer, .resume)))
                    throw NodeCommandError.failed("'\(id)' did not pause to take \(what); not applied")
                }
                usleep(1000)
            }
        }
        body()
        if mustPause {
            try send(.kernel(.lv2(kernelPointer, .resume)))
            if bypassed { try send(.kernel(.lv2(kernelPointer, .bypass(true)))) }
        }
    }
}
