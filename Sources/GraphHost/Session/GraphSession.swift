import Atomics
import FoundationEssentials
import Glibc
import Logging

/// A graph being rendered, seen from the control world: the current compiled graph, the render engine's memory,
/// commands and swaps. A swap builds and warms the new graph completely, hands the render world a prepared
/// transition, and frees the old graph here once the render world reports the transition finished.
public final class GraphSession {
    public private(set) var graph: CompiledGraph
    /// The render world's engine: a real-time thread renders it while the session sends it messages.
    public let engine: UnsafeMutablePointer<RenderEngine>
    /// True while a real-time thread renders (set by `PipeWirePlayer`): swaps then wait for new streams to
    /// buffer before the switch, and plugin state is restored with the plugin paused.
    public var rendersConcurrently = false {
        didSet { graph.setRealTime(rendersConcurrently) }
    }
    private let completed: UnsafeAtomic<Int>
    /// Copies of the engine's counters of applied messages (count, and monotonic time of the render call that
    /// applied the latest), readable while the render thread runs.
    public let appliedMessages: UnsafeAtomic<Int>
    public let appliedNanos: UnsafeAtomic<Int>
    private let silencedOutput: UnsafeAtomic<Int>
    private var reportedNonFinite = 0
    private static let logger = Logger(label: "graphhost")
    private var submitted = 0
    /// Graphs replaced by swaps, with their transitions, until the render world has finished each transition
    /// (`completedTransitions` reaches its number): `collectRetired` frees them then.
    private var retiring: [(number: Int, graph: CompiledGraph, transition: CompiledTransition)] = []
    /// Where in the control queue the latest swap's transition was written: the next swap waits until the render
    /// world has read past it (`PendingSwap.awaitPreviousTransition`).
    private var lastTransition: Int?
    /// Loudness and other analysis of the graph's nodes while someone watches them (`watch`); it follows swaps.
    public let analysis: AudioAnalysis
    /// True once `close()` freed the engine.
    public private(set) var closed = false

    /// Called (control world, with the session) after each swap with the new graph: `run` opens the PipeWire streams
    /// of live inputs the new graph adds.
    public var afterSwap: (@Sendable (CompiledGraph) -> Void)?

    /// The parameter the next control change on the MIDI control port is bound to (`learn`).
    public private(set) var learning: (node: String, parameter: ParameterDescriptor)?

    /// The parameter `learn` names, with a range a controller can sweep; throws the reason otherwise.
    func learnable(_ node: String, _ parameter: ParameterID) throws(ControlError) -> (
        node: String, parameter: ParameterDescriptor
    ) {
        guard let port = graph.document.midiControl?.port else { throw .noMIDIControlPort }
        let instance = try instance(node)
        guard let info = instance.parameters.first(where: { $0.id == parameter }) else {
            throw .unknownParameter(node: node, parameter: parameter, known: instance.parameters.map(\.name))
        }
        guard info.minimum.isFinite && info.maximum.isFinite else {
            throw .unboundedRange(node: node, parameter: parameter, port: port)
        }
        return (node, info)
    }

    /// Binds the control change `controller` on `channel` (1…16) to the parameter `learn` named, replacing what that
    /// controller did; returns the new mapping, or nil when nothing is being learned.
    public func bindLearned(channel: Int, controller: Int) -> MIDIControlMap.ControlMapping? {
        guard let (node, info) = learning, graph.document.midiControl != nil else { return nil }
        learning = nil
        let mapping = MIDIControlMap.ControlMapping(
            channel: channel, controller: controller, node: node, parameter: info.id,
            minimum: info.minimum, maximum: info.maximum, curve: .linear)
        graph.document.midiControl!.controls.removeAll {
            $0.controller == controller && ($0.channel == nil || $0.channel == channel)
        }
        graph.document.midiControl!.controls.append(mapping)
        return mapping
    }

    /// True after `pause`, until `play`.
    public private(set) var paused = false

    /// The musical transport plugins are told about (nil: the graph declares none).
    public private(set) var musicalTime: MusicalTime.Settings?

    /// The fade of `pause` and `play`.
    public static let transportFadeSeconds = 0.02
    /// How long a new plugin that loads a file runs unheard before a swap fades to it.
    public static let filePrerollSeconds = 0.1
    /// How long a swap waits for the new graph's streams to buffer.
    public static let warmUpTimeout = 10.0

    /// The slice length the render mostly runs (`GraphFormat.nominalFrames`): new instances are told it.
    public private(set) var nominalFrames: Int?

    /// Worker threads that share heavy slices (nil: one thread renders).
    private var workerPool: RenderWorkerPool?
    /// How many threads may render a slice.
    public let threads: Int

    /// `threads`: how many threads may render a slice (the rendering thread and `threads - 1` workers), sharing
    /// slices whose steps took `shareAboveNanos` or more; `workerSetUp` runs first on each worker thread.
    public init(
        graph: CompiledGraph, threads: Int = 1, shareAboveNanos: Int = RenderWorkers.defaultShareAboveNanos,
        workerSetUp: (@Sendable () -> Void)? = nil
    ) {
        self.graph = graph
        nominalFrames = graph.nominalFrames
        engine = .allocateRender(capacity: 1)
        let format = graph.document.format
        engine.initialize(
            to: RenderEngine(
                plan: graph.plan, transportFadeFrames: Int(Self.transportFadeSeconds * Double(format.sampleRate)),
                sampleRate: Double(format.sampleRate)))
        if let time = graph.document.musicalTime { engine.pointee.musicalTime.pointee.apply(.settings(time)) }
        self.threads = max(1, threads)
        if threads > 1 {
            let pool = RenderWorkerPool(threads: threads, shareAboveNanos: shareAboveNanos, setUp: workerSetUp)
            workerPool = pool
            engine.pointee.workers = pool.workers
        }
        musicalTime = graph.document.musicalTime
        completed = engine.pointee.completedTransitions
        appliedMessages = engine.pointee.appliedMessages
        appliedNanos = engine.pointee.appliedNanos
        silencedOutput = engine.pointee.silencedSlices
        analysis = AudioAnalysis(graph)
        try? sendInitialCommands(graph, except: [])
    }

    /// Sends new instances the commands their definitions start with (bypass).
    func sendInitialCommands(_ graph: CompiledGraph, except kept: Set<String>) throws {
        for node in graph.document.nodes where !kept.contains(node.id) {
            for command in node.definition.initialCommands {
                try graph.instances[node.id]!.perform(command, concurrent: rendersConcurrently, send: send)
            }
        }
    }

    public var format: GraphFormat { graph.document.format }

    /// Streams the render world may pull now: the current graph's and those of graphs still fading out.
    public var streamsInUse: [StreamInstance] {
        var seen = Set<ObjectIdentifier>()
        return (retiring.map(\.graph) + [graph]).flatMap(\.streams).filter {
            seen.insert(ObjectIdentifier($0)).inserted
        }
    }

    /// The instance of the node `id`; an error naming the graph's nodes when there is none.
    func instance(_ id: String) throws(ControlError) -> NodeInstance {
        guard let instance = graph.instances[id] else { throw .unknownNode(id, known: graph.document.nodes.map(\.id)) }
        return instance
    }

    /// Throws the reason when `request` cannot apply now; changes nothing. Swaps are checked by building them.
    public func check(_ request: Command) throws(ControlError) {
        switch request {
        case .node(let command):
            let instance = try instance(command.node)
            try ControlError.wrapping(ControlError.node) { try instance.check(command.action) }
        case .chain(let node, let name, _):
            _ = try ControlError.wrapping(ControlError.graph) { try graph.document.selecting(chain: name, for: node) }
        case .load(let path, _):
            _ = try ControlError.wrapping(ControlError.graph) { try GraphDocument.load(path: path) }
        case .tempo: if musicalTime == nil { throw .noTransport }
        case .save(let path): try ControlError.wrapping(ControlError.graph) { try GraphDocument.checkWritable(path) }
        case .learn(let node, let parameter): _ = try learnable(node, parameter)
        case .meter(let node, _): _ = try graph.meter(node)
        case .pause, .play, .status, .list, .help, .quit: break
        }
    }

    /// Adds (`on`) or removes a watcher of `kind` on `node`'s output, nil: every output. The node's analysis tap is on
    /// while it has watchers of any kind; a kind's analysis (integrated loudness) starts afresh when its first watcher
    /// comes. Watches survive swaps for the nodes the new graph has. Throws for an unknown node, one without an audio
    /// output, `off` without a watcher, or a kind nothing analyses.
    public func watch(_ kind: AnalysisKind, node: String?, on: Bool) throws(ControlError) {
        if let node, on { _ = try graph.meter(node) }
        try analysis.watch(kind, node: node, on: on)
    }

    /// Carries out a command, pause, play, chain or load; on error nothing changes.
    public func apply(_ request: Command) throws(ControlError) {
        switch request {
        case .node(let command):
            if let document = try swapTarget(for: request) { return try swap(to: document) }
            let instance = try instance(command.node)
            try ControlError.wrapping(ControlError.node) {
                try instance.perform(command.action, concurrent: rendersConcurrently, send: send)
            }
            if let node = graph.document.node(command.node) {
                graph.document.nodes[node.index].definition = node.definition.applying(command.action)
            }
        case .pause, .play:
            try send(.transport(request == .play ? .play : .pause))
            paused = request == .pause
        case .tempo(let bpm):
            guard var time = musicalTime else { return try check(request) }
            time.beatsPerMinute = bpm
            try send(.musicalTime(.settings(time)))
            musicalTime = time
            graph.document.musicalTime = time
        case .chain(_, _, let mode), .load(_, let mode):
            try swap(to: swapTarget(for: request)!, mode: mode)
        case .save(let path):
            try ControlError.wrapping(ControlError.graph) { try graph.document.save(to: path) }
        case .learn(let node, let parameter):
            learning = try learnable(node, parameter)
        case .meter(let node, let on):
            try graph.setMeter(node, on: on)
        case .status, .list, .help, .quit:
            throw .notAChange(request)
        }
    }

    /// Carries out a node command.
    public func apply(_ command: NodeRequest) throws(ControlError) { try apply(.node(command)) }

    /// Renders on the calling thread (offline rendering and tests); the real-time path calls the engine directly.
    public func render(frames: Int, interleaved destination: UnsafeMutablePointer<Float>) {
        engine.pointee.render(frames: frames, interleaved: destination)
    }

    func send(_ message: ControlMessage) throws(ControlError) {
        guard engine.pointee.messages.push(message) else { throw .queueFull }
    }

    /// Replaces the running graph by `document`, crossfading over its `crossfadeSeconds`. Nodes with the same id
    /// and type whose differences are live settings keep running (state, position, buffer); the rest is built
    /// fresh. If anything fails the running graph is untouched. `LiveControl` runs the three steps apart, so the
    /// long one (building and warming up) does not hold the session.
    public func swap(to document: GraphDocument, mode: SwapMode? = nil) throws(ControlError) {
        let pending = try prepareSwap(to: document, mode: mode)
        do {
            try ControlError.wrapping(ControlError.swapFailed) { try pending.build() }
            try commit(pending)
        } catch {
            abandon(pending)
            throw error
        }
    }

    /// The graph a request swaps to (`chain`, `load`, a new file for a plugin), or nil when it applies in place.
    public func swapTarget(for request: Command, files: FileAccess = .owner) throws(ControlError) -> GraphDocument? {
        switch request {
        case .node(let command):
            guard let node = graph.document.node(command.node),
                let changed = try ControlError.wrapping(
                    ControlError.node, { try node.definition.settingFile(command.action, files: files) })
            else { return nil }
            // A new file is loaded by a new instance, warmed and crossfaded to, like a swapped chain.
            var document = graph.document
            document.nodes[node.index].definition = changed
            return document
        case .chain(let node, let name, _):
            return try ControlError.wrapping(ControlError.graph) {
                try graph.document.selecting(chain: name, for: node)
            }
        case .load(let path, _):
            return try ControlError.wrapping(ControlError.graph) { try GraphDocument.load(path: path, files: files) }
        default: return nil
        }
    }

    /// Checks a swap to `document` and decides which nodes it keeps; one swap at a time.
    /// `mode` overrides the new graph's own swap mode.
    /// `renewing`: nodes built afresh even when they could be kept.
    public func prepareSwap(to document: GraphDocument, mode: SwapMode? = nil, renewing: Set<String> = [])
        throws(ControlError) -> PendingSwap
    {
        guard pendingSwap == nil else { throw .swapBusy(pendingSwap!.document.displayName) }
        let old = graph
        guard document.format == old.document.format else {
            throw .swapRefused(
                "\(document.displayName): its format (\(document.format)) differs from the "
                    + "running graph's (\(old.document.format)); a swap cannot change the format"
            )
        }
        guard document.outputIDs.count == old.document.outputIDs.count else {
            throw .swapRefused(
                "\(document.displayName) has \(document.outputIDs.count) outputs and the running graph "
                    + "\(old.document.outputIDs.count); a swap cannot change the number of outputs"
            )
        }
        if let before = old.document.midiControl?.port, let after = document.midiControl?.port, before != after {
            throw .swapRefused(
                "\(document.displayName): its MIDI control port '\(after)' differs from "
                    + "the running graph's '\(before)'; a swap cannot change the port"
            )
        }
        var keep = Set(
            document.nodes.filter { node in
                guard let before = old.document.node(node.id), before.definition.typeName == node.definition.typeName
                else { return false }
                return node.definition.liveChanges(from: before.definition) != nil
            }.map(\.id))
        keep.subtract(renewing)
        if CompiledTransition.union(old: old.document, new: document, kept: keep) == nil {
            // Kept effects in another order cannot share one render order: keep only the sources.
            keep = keep.filter { document.node($0)!.definition.inputBuses == 0 }
        }
        let pending = PendingSwap(
            document: document, old: old, keep: keep, live: rendersConcurrently, mode: mode ?? document.swapMode,
            nominalFrames: nominalFrames, renewing: renewing,
            previous: lastTransition.map { (engine.pointee.messages, $0) })
        pendingSwap = pending
        return pending
    }

    /// Makes `frames` the slice length the render mostly runs (`run` follows the PipeWire quantum): LV2 plugins with
    /// the options interface are told at once (paused around it while a real-time thread renders); for those without
    /// it, returns a swap to the same graph that builds them afresh, told the new length, for the caller to build and
    /// commit (nil when none is needed, or while another swap is being built: the next call makes it).
    public func followBlockLength(_ frames: Int) throws(ControlError) -> PendingSwap? {
        nominalFrames = frames
        var told = format
        told.nominalFrames = frames
        var renew: Set<String> = []
        for (id, instance) in graph.instances {
            guard let plugin = instance.hostedPlugin, plugin.nominalBlockLength != told.nominalBlockLength else {
                continue
            }
            var taken = false
            if plugin.takesNominalBlockLength {
                taken = try ControlError.wrapping(ControlError.node) {
                    try plugin.setNominalBlockLength(
                        told.nominalBlockLength, concurrent: rendersConcurrently, send: send)
                }
            }
            if !taken { renew.insert(id) }
        }
        guard !renew.isEmpty, pendingSwap == nil else { return nil }
        return try prepareSwap(to: graph.document, renewing: renew)
    }

    /// The nominal block length each LV2 plugin was told, by node id.
    public var pluginBlockLengths: [String: Int] {
        graph.instances.compactMapValues { $0.hostedPlugin?.nominalBlockLength }
    }

    /// Puts the built graph in place of the running one: the render world crossfades to it, and kept nodes get the
    /// commands that turn their live state into the new file's values (computed now, so changes made while the
    /// swap was built are taken into account). A swap that renews nodes of the running graph itself
    /// (`followBlockLength`) changes nothing that is heard: kept nodes stay as they are, and the renewed ones get
    /// the changes made while they were built.
    public func commit(_ pending: PendingSwap) throws(ControlError) {
        guard !closed, pendingSwap === pending, graph === pending.old, let next = pending.next else {
            throw .swapStale("the swap to \(pending.document.displayName) is no longer current")
        }
        collectRetired()
        let keep = pending.keep
        let document = pending.document
        var changes: [String: [NodeCommand]] = [:]
        if pending.renewing.isEmpty {
            for id in keep {
                guard
                    let commands = document.node(id)!.definition.liveChanges(from: graph.document.node(id)!.definition)
                else {
                    throw .swapStale("'\(id)' changed while \(document.displayName) was being built; load it again")
                }
                for command in commands {
                    try ControlError.wrapping(ControlError.node) { try next.instances[id]!.check(command) }
                }
                changes[id] = commands
            }
        } else {
            for id in pending.renewing {
                guard
                    let commands = graph.document.node(id)!.definition.liveChanges(from: document.node(id)!.definition)
                else {
                    throw .swapStale("'\(id)' changed while it was being renewed; try again")
                }
                for command in commands {
                    try ControlError.wrapping(ControlError.node) { try next.instances[id]!.check(command) }
                }
                changes[id] = commands
            }
            next.document = graph.document
        }
        let rate = Double(document.format.sampleRate)
        // New plugins that load a file (a convolver's impulse response) run unheard on the live input first.
        let loadsFiles = next.instances.contains { !keep.contains($0.key) && $0.value.hostedPlugin?.loadsFiles == true }
        let transition = CompiledTransition(
            from: pending.old, to: next, fadeFrames: Int(document.crossfadeSeconds * rate),
            preroll: loadsFiles ? Int(Self.filePrerollSeconds * rate) : 0,
            spillover: pending.mode == .spillover ? (SwapMode.tailThreshold, Int(document.tailSeconds * rate)) : nil)
        let position = engine.pointee.messages.index.written.load(ordering: .relaxed)
        try send(.transition(transition.transition))
        lastTransition = position
        // After the transition: had it been refused (queue full), the new graph is freed, and no message may
        // point into it. The engine applies them right after the transition (usually in the same render call).
        if (try? sendInitialCommands(next, except: keep)) == nil {
            Self.logger.warning(
                """
                the control queue was full: nodes of \(document.displayName) \
                that start bypassed may be heard unbypassed
                """
            )
        }
        pendingSwap = nil
        let old = pending.old
        old.release(keep)
        if let time = document.musicalTime, time != musicalTime, (try? send(.musicalTime(.settings(time)))) != nil {
            musicalTime = time
        }
        submitted += 1
        retiring.append((submitted, old, transition))
        graph = next
        analysis.follow(next)
        for id in sendDelays(next.compensation, to: keep) {
            Self.logger.warning(
                """
                mixer '\(id)' kept from the previous graph has no room for the delays that would align \
                its inputs (\(next.compensation.delays[id] ?? [])); load the graph afresh to compensate
                """
            )
        }
        afterSwap?(next)
        for id in changes.keys.sorted() {
            for command in changes[id]! {
                try ControlError.wrapping(ControlError.node) {
                    try next.instances[id]!.perform(command, concurrent: rendersConcurrently, send: send)
                }
            }
        }
    }

    /// Drops a swap that failed or was cancelled: what it built is freed, the running graph is untouched.
    public func abandon(_ pending: PendingSwap) {
        pending.discard()
        if pendingSwap === pending { pendingSwap = nil }
    }

    /// Cancels the swap being built, if any (its warm-up stops waiting; `quit` does this).
    public func cancelSwap() { pendingSwap?.cancel() }

    /// The swap being built, if any.
    public private(set) var pendingSwap: PendingSwap?

    /// Recomputes latency compensation from the latencies the nodes report now, and sends mixers their new delays.
    /// Returns the compensation when it changed, with the mixers whose delay lines are too short for it (their
    /// inputs stay as they were; a reload makes room).
    public func updateCompensation() -> (compensation: LatencyCompensation, tooShort: [String])? {
        let now = LatencyCompensation(document: graph.document, instances: graph.instances)
        guard now != graph.compensation else { return nil }
        let tooShort = sendDelays(
            now, to: Set(now.delays.keys).filter { now.delays[$0] != graph.compensation.delays[$0] })
        graph.compensation = now
        return (now, tooShort)
    }

    /// Sends `compensation`'s delays to the mixers `ids`, which may be rendering; returns those that cannot take them.
    func sendDelays(_ compensation: LatencyCompensation, to ids: Set<String>) -> [String] {
        var tooShort: [String] = []
        for id in ids.sorted() {
            guard let instance = graph.instances[id], let delays = compensation.delays[id] else { continue }
            guard let messages = instance.delayMessages(delays) else {
                tooShort.append(id)
                continue
            }
            for message in messages { try? send(message) }
        }
        return tooShort
    }

    /// Moves plugin log lines into swift-log and reports output silenced because it held NaN, Inf or a burst above +24
    /// dBFS.
    public func drainLogs() {
        graph.drainPluginLogs()
        let silenced = silencedOutput.load(ordering: .relaxed)
        if silenced > reportedNonFinite {
            Self.logger.error(
                """
                the graph's output held NaN, Inf or a burst above +24 dBFS: silenced \
                \(silenced) slice(s) so far (plugins are now checked one by one)
                """
            )
            reportedNonFinite = silenced
        }
    }

    /// Frees graphs and transitions the render world has finished with. Returns how many swaps are still fading.
    @discardableResult
    public func collectRetired() -> Int {
        let done = completed.load(ordering: .acquiring)
        while let first = retiring.first, first.number <= done {
            first.graph.close()
            retiring.removeFirst()
        }
        return retiring.count
    }

    /// Threads that render when `--threads` is not given: the cores, less one where there are more than two.
    public static var defaultThreads: Int { RenderWorkerPool.defaultThreads }

    /// Steps the workers ran so far (0 without workers).
    public var workerSteps: Int { workerPool?.workers.workerSteps.load(ordering: .relaxed) ?? 0 }

    /// Gives the workers the rendering thread's scheduling once it is known (live: call on the control loop's turns).
    public func followRenderThread() { workerPool?.followRenderThread() }

    /// Closes everything; nothing may render the engine afterwards.
    public func close() {
        guard !closed else { return }
        closed = true
        analysis.stop()
        workerPool?.stop()
        workerPool = nil
        pendingSwap?.stopWaiting()
        retiring.forEach { $0.graph.close() }
        retiring.removeAll()
        graph.close()
        engine.pointee.deallocate()
        engine.deinitialize(count: 1).deallocateRender()
    }

    deinit { close() }
}
