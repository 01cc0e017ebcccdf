import CPipeWireGlue
import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// What `graphhost run` asks of PipeWire.
public struct PlaybackOptions {
    public var name: String
    public var target: String?
    public var latencyFrames: Int?
    /// Idle like a sink: the outputs link passively to their devices, and after this many seconds of quiet with
    /// nothing to play PipeWire stops running the graph until an application plays into one of its sinks. Nil: the
    /// graph runs while it is linked.
    public var idleAfterSeconds: Double?
    /// Threads that render the graph (`GraphSession(graph:threads:)`).
    public var threads: Int
    /// The RTP sessions outputs are sent as: PipeWire's RTP sink is loaded into our context for each.
    public var rtpSinks: [RTPSinkSpec] = []

    public init(
        name: String, target: String? = nil, latencyFrames: Int? = nil, idleAfterSeconds: Double? = nil,
        threads: Int = 1
    ) {
        self.name = name
        self.target = target
        self.latencyFrames = latencyFrames
        self.idleAfterSeconds = idleAfterSeconds
        self.threads = threads
    }
}

/// An output sent as RTP: the module's node name (the output's target) and its arguments.
public struct RTPSinkSpec: Equatable, Sendable {
    public var nodeName: String
    public var arguments: String
}

/// Errors of the PipeWire connection, each saying what to do.
public enum PlaybackError: Error, CustomStringConvertible {
    case noDaemon(socket: String, reason: String)
    case stream(String)

    public var description: String {
        switch self {
        case .noDaemon(let socket, let reason):
            return
                "cannot reach a PipeWire daemon at \(socket) (\(reason)). Start one (pipewire and "
                + "wireplumber), set PIPEWIRE_REMOTE or XDG_RUNTIME_DIR to a running one, or "
                + "start a private headless one: eval \"$(scripts/pipewire-headless start)\""
        case .stream(let why): return "PipeWire stream error: \(why)"
        }
    }

    /// The socket libpipewire will try: PIPEWIRE_REMOTE (absolute or a name in the runtime dir), else pipewire-0
    /// in PIPEWIRE_RUNTIME_DIR, XDG_RUNTIME_DIR, USERPROFILE or /run/pipewire.
    public static var socketPath: String {
        let env = ProcessInfo.processInfo.environment
        let remote = env["PIPEWIRE_REMOTE"].flatMap { $0.isEmpty ? nil : $0 } ?? "pipewire-0"
        if remote.hasPrefix("/") { return remote }
        let dir =
            ["PIPEWIRE_RUNTIME_DIR", "XDG_RUNTIME_DIR", "USERPROFILE"].compactMap { env[$0] }.first { !$0.isEmpty }
            ?? "/run/pipewire"
        return dir + "/" + remote
    }
}

/// Plays a graph session through a pw_stream whose process callback (PipeWire's real-time data thread)
/// runs `PlaybackRenderer`. Control calls run under the thread loop's lock. When the daemon goes away
/// the graph keeps its state and `reconnect()` builds a new stream on a new connection.
/// What the callbacks report to the control loop is in the `state` mutex.
public final class PipeWirePlayer {
    /// The graph's format, which the stream carries.
    public let format: GraphFormat
    public private(set) var options: PlaybackOptions
    let logger: Logger
    let loop: OpaquePointer
    let context: OpaquePointer
    /// The RTP sinks loaded for outputs sent as RTP (PipeWire thread only).
    private var rtpModules: [UnsafeMutableRawPointer] = []
    var core: OpaquePointer?
    var stream: OpaquePointer?
    let renderer: UnsafeMutablePointer<PlaybackRenderer>
    let streamListener: UnsafeMutablePointer<spa_hook>
    let coreListener: UnsafeMutablePointer<spa_hook>
    let streamEvents: UnsafeMutablePointer<pw_stream_events>
    let coreEvents: UnsafeMutablePointer<pw_core_events>
    /// The daemon's profiler, bound on each connection (nil when its protocol could not be loaded or disconnected), and
    /// the error of loading its protocol (0: loaded).
    var profiler: OpaquePointer?
    let profilerProtocol: Int32
    /// Set from the loop thread; read by the control loop.
    /// What the loop thread's callbacks report to the control loop.
    struct StreamState {
        var disconnected = false
        var streamError: String?
        var streaming = false
        var noSink = false
        /// Deactivated by `setIdle` (PipeWire reports it paused).
        var idle = false
    }
    let state = Mutex(StreamState())
    private var targetToUse: String?
    /// The live MIDI inputs (one per port the graph's `midi` nodes name), made with the playback stream.
    private var midiInputs: [MIDIInputStream] = []
    /// The graph's `capture` and `sink` nodes, and their streams, made with the playback stream.
    private var liveInputSpecs: [LiveInputSpec] = []
    private var liveInputs: [LiveInputStream] = []
    /// Runs the playback stream after the live inputs in their cycle while `gated` (a connection whose graph had live
    /// inputs, at most `CycleGate.capacity`).
    let gate = CycleGate.allocate()
    private var gated = false
    /// Under `idleAfterSeconds`: the silent stream that keeps the group running while graphhost has reasons of its own.
    private var hold: HoldStream?
    /// The latency the streams report to PipeWire (used under the loop lock).
    let latencyReport = LatencyReport()
    /// Called on the loop thread, under `idleAfterSeconds`, when PipeWire starts, pauses or fails the graph's stream
    /// and when the daemon goes away: a resting run loop waits for nothing else.
    public var onStreamChange: (@Sendable () -> Void)?
    /// The node.group and node.link-group of every stream: one driver for all, and none linked into another.
    private var group: String { "graphhost-\(getpid())" }

    /// The live inputs to open with the playback stream. Set it before `connect()`.
    public func setLiveInputs(_ inputs: [LiveInputSpec]) { liveInputSpecs = inputs }

    /// After a swap: opens streams for the graph's new live inputs and closes those of inputs it no longer has (their
    /// rings stay, so a node that comes back finds its ring). A node with the same id and source keeps its stream; one
    /// whose target or sink name changed gets a new one.
    public func syncLiveInputs(_ inputs: [LiveInputSpec]) {
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        let wanted = Dictionary(inputs.map { ($0.id, $0.source) }, uniquingKeysWith: { a, _ in a })
        let stale = liveInputs.filter { wanted[$0.id] != $0.source }
        stale.forEach(destroyLocked)
        liveInputs.removeAll { wanted[$0.id] != $0.source }
        liveInputSpecs = inputs
        guard let core else { return }  // Disconnected: the next connect opens them all.
        if gated && inputs.isEmpty {
            // Nothing would run the output any more: its streams are made again, for PipeWire to run by themselves.
            logger.info("the graph has no live input left; connecting its streams again")
            tearDownLocked()
            do { try connect() } catch { state.withLock { $0.streamError = "\(error)" } }
            return
        }
        for spec in inputs where !liveInputs.contains(where: { $0.id == spec.id }) {
            do {
                liveInputs.append(try makeLiveInputLocked(core: core, spec: spec))
            } catch {
                logger.error("live input '\(spec.id)': \(error)")
            }
        }
    }

    /// Opens the stream of a live input, in the gate when the output runs after the inputs and a bit is free.
    private func makeLiveInputLocked(core: OpaquePointer, spec: LiveInputSpec) throws -> LiveInputStream {
        let used = liveInputs.reduce(UInt64(0)) { $0 | $1.bit }
        let free = (~used).trailingZeroBitCount
        let bit: UInt64 = gated && free < CycleGate.capacity ? 1 << UInt64(free) : 0
        let input = try LiveInputStream(
            core: core, input: spec, graphName: options.name, format: format, group: group,
            gate: bit == 0 ? nil : gate, bit: bit, latencyReport: latencyReport)
        latencyReport.addInput(input.stream)
        logger.info("live input '\(spec.id)': PipeWire node \(input.nodeName)")
        return input
    }

    /// Takes a live input out of the gate, then destroys its stream (once more out of it, in case its first cycle
    /// counted it in meanwhile).
    private func destroyLocked(_ input: LiveInputStream) {
        latencyReport.remove(input.stream)
        gate.pointee.leave(bit: input.bit)
        input.destroy()
        gate.pointee.leave(bit: input.bit)
    }

    /// The graph's second, third… output nodes (id and target), each played by a stream of its own, and their streams.
    private var extraOutputSpecs: [(id: String, target: String?)] = []
    private var extraOutputs: [ExtraOutputStream] = []
    private var fanout: UnsafeMutablePointer<OutputFanout>?

    /// The target `run --target` gave, which a graph's own first output target does not override.
    public var commandTarget: String?

    /// Plays the outputs where `routing` says: the first output's target, the further outputs' and the RTP sinks,
    /// connecting again when it changed (a gap of a few cycles). The number of further outputs stays as it was.
    public func reroute(_ routing: OutputRouting) {
        var routing = routing
        routing.target = commandTarget ?? routing.target
        let extra = routing.extraOutputs.map { (id: $0.id, target: $0.target) }
        guard
            routing.target != options.target || routing.rtpSinks != options.rtpSinks
                || !extra.elementsEqual(extraOutputSpecs, by: { $0.id == $1.id && $0.target == $1.target })
        else { return }
        pw_thread_loop_lock(loop)
        tearDownLocked()
        options.target = routing.target
        options.rtpSinks = routing.rtpSinks
        targetToUse = routing.target
        if extra.count == extraOutputSpecs.count { extraOutputSpecs = extra }
        pw_thread_loop_unlock(loop)
        logger.info("the outputs are routed anew; connecting again")
        do { try connect() } catch { state.withLock { $0.streamError = "\(error)" } }
    }

    /// The outputs after the first (which this player's main stream plays). Set it before `connect()`.
    public func setExtraOutputs(_ outputs: [(id: String, target: String?)]) {
        extraOutputSpecs = outputs
        if !outputs.isEmpty && fanout == nil {
            let fanout = OutputFanout.allocate(outputs: outputs.count + 1, channels: format.channels)
            self.fanout = fanout
            renderer.pointee.fanout = fanout
        }
    }

    public var counters: PlaybackCounters { renderer.pointee.counters }

    /// Tells PipeWire the graph's own latency (`LatencyCompensation.total`) when it changed: its streams report it
    /// with what lies before and after them (`LatencyReport`). Any thread.
    public func reportGraphLatency(frames: Int) {
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        latencyReport.setGraphLatency(frames: frames, sampleRate: format.sampleRate)
    }

    /// Called on PipeWire's loop thread with each `NODE:PARAM`, value pair of a Props param set on the playback node
    /// (`pw-cli set-param ID Props '{ params = [ "eq:band.3" 6.0 ] }'`); false for a value that is not a number.
    /// Set it before `connect()`.
    public var propsChanged: (@Sendable (String, Double, Bool) -> Void)?
    /// The parameters published as the node's PropInfo and Props (again after a reconnect).
    private var published: [PublishedParameter] = []

    /// Publishes the graph's parameters on the playback node (pw-dump shows them; any thread).
    public func publish(_ parameters: [PublishedParameter]) {
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        published = parameters
        updatePublishedLocked()
    }

    private func updatePublishedLocked() {
        guard let stream, !published.isEmpty else { return }
        let strings = published.flatMap { [strdup($0.name), strdup($0.description)] }
        defer { strings.forEach { free($0) } }
        let names = stride(from: 0, to: strings.count, by: 2).map { UnsafePointer(strings[$0]) }
        let descriptions = stride(from: 1, to: strings.count, by: 2).map { UnsafePointer(strings[$0]) }
        let kinds = published.map { p -> Int32 in
            let kind =
                switch p.kind {
                case .float: GH_PARAM_FLOAT
                case .int: GH_PARAM_INT
                case .bool: GH_PARAM_BOOL
                }
            return Int32(kind.rawValue)
        }
        // Each PropInfo and its Props entry: the strings (padded to 8 bytes) and at most 200 bytes of pod headers.
        let size = 256 + published.reduce(0) { $0 + 200 + 2 * ($1.name.utf8.count + 8) + $1.description.utf8.count + 8 }
        var buffer = [UInt8](repeating: 0, count: size)
        var params = [UnsafePointer<spa_pod>?](repeating: nil, count: published.count + 1)
        let count = gh_build_param_props(
            &buffer, UInt32(buffer.count), names, descriptions, published.map(\.value),
            published.map(\.minimum), published.map(\.maximum), kinds,
            UInt32(published.count), &params, UInt32(params.count))
        guard count > 0 else {
            return logger.error("the graph's parameters do not fit in a PipeWire param (\(published.count) parameters)")
        }
        _ = params.withUnsafeMutableBufferPointer { pw_stream_update_params(stream, $0.baseAddress, count) }
    }

    /// Tests only: a C function called with 1/0 around every process callback on the data thread.
    /// Set it before `connect()`.
    public func setProbe(_ probe: (@convention(c) (Int32) -> Void)?) {
        renderer.pointee.probe = probe
    }

    /// `run --record`: the tap the process callback copies its output into. Set it before `connect()`.
    public func setRecordTap(_ tap: RecordTap?) {
        renderer.pointee.record = tap
    }

    static let pipewireInitialized: Bool = {
        pw_init(nil, nil)
        return true
    }()

    /// A player of the graph `engine` renders (a session's); set the session's `rendersConcurrently` first.
    public init(
        engine: UnsafeMutablePointer<RenderEngine>, format: GraphFormat, options: PlaybackOptions, logger: Logger
    ) throws {
        _ = Self.pipewireInitialized
        self.format = format
        self.options = options
        self.logger = logger
        guard let loop = pw_thread_loop_new("graphhost-pw", nil) else {
            throw PlaybackError.stream("cannot create a thread loop")
        }
        self.loop = loop
        // client-rt.conf loads module-rt, which gives the data thread (our process callback) real-time priority.
        let contextProps = pw_properties_new_string("config.name=client-rt.conf")
        guard let context = pw_context_new(pw_thread_loop_get_loop(loop), contextProps, 0) else {
            throw PlaybackError.stream("cannot create a context")
        }
        self.context = context
        profilerProtocol = gh_profiler_load_protocol(context)
        renderer = .allocateRender(capacity: 1)
        renderer.initialize(
            to: PlaybackRenderer(engine: engine, channels: format.channels, sampleRate: format.sampleRate))
        streamListener = .allocate(capacity: 1)
        streamListener.initialize(to: spa_hook())
        coreListener = .allocate(capacity: 1)
        coreListener.initialize(to: spa_hook())
        streamEvents = .allocate(capacity: 1)
        streamEvents.initialize(to: Self.makeStreamEvents())
        coreEvents = .allocate(capacity: 1)
        coreEvents.initialize(to: Self.makeCoreEvents())
        targetToUse = options.target
        renderer.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        pw_thread_loop_start(loop)
    }

    deinit {
        pw_thread_loop_lock(loop)
        tearDownLocked()
        pw_thread_loop_unlock(loop)
        pw_thread_loop_stop(loop)
        pw_context_destroy(context)
        pw_thread_loop_destroy(loop)
        renderer.pointee.deallocate()
        renderer.deallocateRender()
        CycleGate.deallocate(gate)
        if let fanout { OutputFanout.deallocate(fanout) }
        streamListener.deallocate()
        coreListener.deallocate()
        streamEvents.deallocate()
        coreEvents.deallocate()
    }

    public var disconnected: Bool { state.withLock { $0.disconnected } }
    public var streamError: String? { state.withLock { $0.streamError } }
    /// Linked and running, or idle by our choice.
    public var streaming: Bool { state.withLock { $0.streaming || $0.idle } }
    public var idle: Bool { state.withLock { $0.idle } }

    /// Only a lone stream may idle: live inputs, further outputs and MIDI inputs keep their own cycles going.
    public var canIdle: Bool {
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        return stream != nil && hold == nil && extraOutputs.isEmpty && liveInputs.isEmpty && midiInputs.isEmpty
    }

    /// Deactivates the stream (PipeWire then stops waking the process callback) or activates it again.
    public func setIdle(_ idle: Bool) {
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        guard let stream, state.withLock({ $0.idle }) != idle else { return }
        if !idle { renderer.pointee.resumed.store(true, ordering: .releasing) }
        _ = pw_stream_set_active(stream, !idle)
        state.withLock { $0.idle = idle }
    }
    /// Under `idleAfterSeconds`: whether the hold stream keeps the graph running (true when there is none).
    public var holding: Bool {
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        return hold?.active ?? true
    }

    /// Under `idleAfterSeconds`: lets PipeWire pause the graph while no application plays into its sinks (false), or
    /// keeps it running (true).
    public func setHolding(_ on: Bool) {
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        hold?.setActive(on)
    }

    /// The session manager found no sink for the stream ("no node available"), as right after a daemon restart
    /// before its sinks are known: the stream failed, and `reconnect()` may find one later.
    public var noSink: Bool { state.withLock { $0.noSink } }
    /// What the session manager says when it has no sink for a stream.
    public static let noSinkMessage = "no node available"

    /// Connects to the daemon and starts the stream. Throws `.noDaemon` when no daemon answers.
    public func connect() throws {
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        guard let core = pw_context_connect(context, nil, 0) else {
            throw PlaybackError.noDaemon(socket: PlaybackError.socketPath, reason: String(cString: strerror(errno)))
        }
        self.core = core
        for sink in options.rtpSinks {
            // In our own context: the sink lives and ends with this process, the daemon's configuration untouched.
            guard let module = gh_load_module(context, "libpipewire-module-rtp-sink", sink.arguments)
            else {
                throw PlaybackError.stream(
                    "cannot load PipeWire's RTP sink (libpipewire-module-rtp-sink) for \(sink.nodeName): "
                        + String(cString: strerror(errno)))
            }
            rtpModules.append(module)
        }
        // The sinks' nodes appear once their streams connected, on this loop: the outputs can target them after that.
        for sink in options.rtpSinks {
            var tries = 0
            while gh_find_node(loop, core, sink.nodeName, 2000) != 1 {
                tries += 1
                guard tries < 50 else {
                    throw PlaybackError.stream("PipeWire's RTP sink \(sink.nodeName) did not appear within 5 s")
                }
                pw_thread_loop_unlock(loop)
                usleep(100_000)
                pw_thread_loop_lock(loop)
            }
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        gh_core_add_listener(core, coreListener, coreEvents, me)
        if profilerProtocol == 0 { profiler = gh_profiler_new(core) }
        if let target = targetToUse, gh_find_node(loop, core, target, 2000) != 1 {
            logger.warning("target '\(target)' not found; playing to the default sink")
            targetToUse = nil
        }
        try createStreamLocked()
        if let fanout {
            for (k, output) in extraOutputSpecs.enumerated() {
                let stream = try ExtraOutputStream(
                    core: core, id: output.id, index: k + 1, fanout: fanout, targetNode: output.target,
                    graphName: options.name, format: format, latencyFrames: options.latencyFrames, group: group,
                    passive: options.idleAfterSeconds != nil, latencyReport: latencyReport)
                extraOutputs.append(stream)
                latencyReport.addOutput(stream.stream)
                logger.info(
                    "output '\(output.id)': PipeWire node \(stream.nodeName)\(output.target.map { " to \($0)" } ?? "")")
            }
        }
        for spec in liveInputSpecs {
            liveInputs.append(try makeLiveInputLocked(core: core, spec: spec))
        }
        if options.idleAfterSeconds != nil {
            hold = try HoldStream(
                core: core, graphName: options.name, format: format, target: targetToUse,
                latencyFrames: options.latencyFrames, group: group, gate: gated ? gate : nil)
        }
        for (name, ring) in MIDIInputPorts.shared.all {
            midiInputs.append(
                try MIDIInputStream(core: core, name: name, nodeName: "\(options.name).\(name)", ring: ring))
            logger.info("MIDI input '\(name)': PipeWire node \(options.name).\(name)")
        }
        state.withLock {
            $0.disconnected = false
            $0.streamError = nil
            $0.noSink = false
        }
    }

    private func createStreamLocked() throws {
        guard let props = pw_properties_new_string("") else { throw PlaybackError.stream("cannot create properties") }
        pw_properties_set(props, PW_KEY_MEDIA_TYPE, "Audio")
        pw_properties_set(props, PW_KEY_MEDIA_CATEGORY, "Playback")
        pw_properties_set(props, PW_KEY_MEDIA_ROLE, "Music")
        pw_properties_set(props, PW_KEY_NODE_NAME, options.name)
        pw_properties_set(props, PW_KEY_APP_NAME, "graphhost")
        if let latency = options.latencyFrames {
            pw_properties_set(props, PW_KEY_NODE_LATENCY, "\(latency)/\(format.sampleRate)")
        }
        if let target = targetToUse { pw_properties_set(props, "target.object", target) }
        if options.idleAfterSeconds != nil {
            // WirePlumber links a passive node passively: the device then runs for it only while another member of
            // its group (the hold stream, a sink an application plays into) needs it.
            pw_properties_set(props, PW_KEY_NODE_PASSIVE, "true")
        }
        if !liveInputSpecs.isEmpty || !extraOutputSpecs.isEmpty || options.idleAfterSeconds != nil {
            pw_properties_set(props, PW_KEY_NODE_GROUP, group)
            pw_properties_set(props, "node.link-group", group)
        }
        guard let stream = pw_stream_new(core, options.name, props) else {
            throw PlaybackError.stream("cannot create a stream")
        }
        self.stream = stream
        renderer.pointee.stream = stream
        pw_stream_add_listener(stream, streamListener, streamEvents, UnsafeMutableRawPointer(renderer))
        var buffer = [UInt8](repeating: 0, count: 2048)
        var params: [UnsafePointer<spa_pod>?] = [nil, nil]
        let count = gh_build_formats(
            &buffer, UInt32(buffer.count), UInt32(format.sampleRate), UInt32(format.channels), &params)
        // Made before the live inputs, which run it (`CycleGate`): a trigger stream PipeWire does not run by itself.
        gated = !liveInputSpecs.isEmpty && liveInputSpecs.count <= CycleGate.capacity
        gate.pointee.output = gated ? stream : nil
        LiveInputRings.sameCycle.store(gated, ordering: .relaxed)
        let flags = pw_stream_flags(
            PW_STREAM_FLAG_AUTOCONNECT.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue
                | PW_STREAM_FLAG_RT_PROCESS.rawValue | (gated ? PW_STREAM_FLAG_TRIGGER.rawValue : 0))
        let result = params.withUnsafeMutableBufferPointer {
            pw_stream_connect(stream, SPA_DIRECTION_OUTPUT, UInt32.max, flags, $0.baseAddress, count)
        }
        if result < 0 { throw PlaybackError.stream("connect failed: \(String(cString: strerror(-result)))") }
        latencyReport.addOutput(stream)
        updatePublishedLocked()
    }

    /// Destroys the playback stream (the live inputs first, as they may run it).
    private func destroyStreamLocked() {
        liveInputs.forEach(destroyLocked)
        liveInputs = []
        gate.pointee.output = nil
        gated = false
        LiveInputRings.sameCycle.store(false, ordering: .relaxed)
        if let stream {
            latencyReport.remove(stream)
            renderer.pointee.stream = nil
            pw_stream_destroy(stream)
            self.stream = nil
        }
        renderer.pointee.position.store(nil, ordering: .releasing)
    }

    private func tearDownLocked() {
        latencyReport.removeAll()
        rtpModules.forEach { gh_unload_module($0) }
        rtpModules = []
        hold?.destroy()
        hold = nil
        extraOutputs.forEach { $0.destroy() }
        extraOutputs = []
        midiInputs.forEach { $0.destroy() }
        midiInputs = []
        destroyStreamLocked()
        if let profiler {
            gh_profiler_destroy(profiler)
            self.profiler = nil
        }
        if let core {
            spa_hook_remove(coreListener)
            pw_core_disconnect(core)
            self.core = nil
        }
        state.withLock { $0.idle = false }
    }

    /// PipeWire's profiler figures for the stream's node since the last call, or why there are none.
    public func takePipeWireLoad() -> PipeWireLoadReading {
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        guard profilerProtocol == 0 else {
            return .unavailable(
                "cannot load PipeWire's profiler protocol (\(String(cString: strerror(-profilerProtocol))))")
        }
        guard let profiler, let stream else { return .unavailable("not connected to PipeWire") }
        switch gh_profiler_state(profiler) {
        case 0: return .unavailable("looking for the daemon's profiler")
        case 1: break
        default:
            return .unavailable("the daemon has no profiler (load libpipewire-module-profiler in its context.modules)")
        }
        let node = pw_stream_get_node_id(stream)
        guard node != UInt32.max else { return .unavailable("the stream has no PipeWire node yet") }
        gh_profiler_set_node(profiler, node)
        var totals = gh_profiler_totals()
        gh_profiler_take(profiler, &totals)
        guard totals.cycles > 0 else { return .unavailable("no profiled cycle of node \(node) yet") }
        let cycles = Double(totals.cycles)
        return .figure(
            DSPLoad.PipeWireFigure(
                nodeID: Int(node), cycles: Int(totals.cycles), averageMicros: Double(totals.busy_ns) / cycles / 1000,
                maxMicros: Double(totals.max_busy_ns) / 1000,
                share: totals.period_ns > 0 ? Double(totals.busy_ns) / Double(totals.period_ns) : 0))
    }

    /// Drops the dead connection and tries once to connect again; false while the daemon is still away.
    public func reconnect() -> Bool {
        pw_thread_loop_lock(loop)
        tearDownLocked()
        pw_thread_loop_unlock(loop)
        do {
            try connect()
            return true
        } catch {
            logger.debug("reconnect failed: \(error)")
            pw_thread_loop_lock(loop)
            tearDownLocked()
            pw_thread_loop_unlock(loop)
            return false
        }
    }

    /// Fades out over 50 ms (waiting at most `timeout`), then disconnects.
    public func stop(timeout: TimeInterval = 0.15) {
        renderer.pointee.fadeRequested.store(true, ordering: .releasing)
        let deadline = Date().addingTimeInterval(timeout)
        while streaming && !idle && !renderer.pointee.faded.load(ordering: .acquiring) && Date() < deadline {
            usleep(2000)
        }
        pw_thread_loop_lock(loop)
        tearDownLocked()
        pw_thread_loop_unlock(loop)
    }

    // MARK: events (PipeWire loop thread, except process on the data thread)

    /// The player behind a stream event's userdata (the renderer).
    private static func player(_ data: UnsafeMutableRawPointer?) -> PipeWirePlayer {
        Unmanaged<PipeWirePlayer>.fromOpaque(data!.assumingMemoryBound(to: PlaybackRenderer.self).pointee.owner!)
            .takeUnretainedValue()
    }

    private static func makeStreamEvents() -> pw_stream_events {
        var events = pw_stream_events()
        events.version = UInt32(PW_VERSION_STREAM_EVENTS)
        events.process = { data in
            // The data thread: only the renderer, which is @_noLocks, runs here.
            PlaybackRenderer.process(data)
        }
        events.state_changed = { data, _, state, error in
            let player = PipeWirePlayer.player(data)
            let message = error.map { String(cString: $0) }
            // Started by an application playing into a sink while the hold stream rested: hold from this cycle on, so
            // that effect tails are heard out after it stops.
            if state == PW_STREAM_STATE_STREAMING { player.hold?.setActive(true) }
            if player.hold != nil { player.onStreamChange?() }
            player.state.withLock { reported in
                reported.streaming = state == PW_STREAM_STATE_STREAMING
                if state == PW_STREAM_STATE_ERROR {
                    if message == PipeWirePlayer.noSinkMessage {
                        reported.noSink = true
                    } else {
                        reported.streamError = message ?? "unknown error"
                    }
                }
            }
        }
        events.param_changed = { data, id, param in
            if id == SPA_PARAM_Latency.rawValue, let param {
                let player = PipeWirePlayer.player(data)
                if let stream = player.stream { player.latencyReport.received(param, on: stream) }
                return
            }
            if id == SPA_PARAM_Props.rawValue, let param {
                let player = PipeWirePlayer.player(data)
                _ = gh_parse_param_props(
                    param,
                    { target, name, value, valid in
                        let player = Unmanaged<PipeWirePlayer>.fromOpaque(target!).takeUnretainedValue()
                        player.propsChanged?(String(cString: name!), value, valid != 0)
                    }, Unmanaged.passUnretained(player).toOpaque())
                return
            }
            guard id == SPA_PARAM_Format.rawValue, let param else { return }
            var rate: UInt32 = 0
            var channels: UInt32 = 0
            var planar: Int32 = 0
            let player = PipeWirePlayer.player(data)
            guard gh_parse_format(param, &rate, &channels, &planar) == 1 else {
                player.state.withLock { $0.streamError = "the daemon offered a format that is not 32-bit float audio" }
                return
            }
            player.renderer.pointee.planarFormat.store(planar != 0, ordering: .releasing)
            let format = player.format
            let stride = planar != 0 ? 4 : 4 * Int(channels)
            var buffer = [UInt8](repeating: 0, count: 1024)
            var pod: UnsafePointer<spa_pod>? = gh_build_buffers(
                &buffer, 1024, UInt32(max(8192, format.maxFrames)), UInt32(stride),
                planar != 0 ? channels : 1)
            _ = pw_stream_update_params(player.stream, &pod, 1)
            player.logger.info(
                "format: \(rate) Hz, \(channels) channels, \(planar != 0 ? "planar" : "interleaved") float")
        }
        events.io_changed = { data, id, area, _ in
            guard id == SPA_IO_Position.rawValue else { return }
            PipeWirePlayer.player(data).renderer.pointee.position.store(area, ordering: .releasing)
        }
        return events
    }

    private static func makeCoreEvents() -> pw_core_events {
        var events = pw_core_events()
        events.version = UInt32(PW_VERSION_CORE_EVENTS)
        events.error = { data, id, _, res, message in
            let player = Unmanaged<PipeWirePlayer>.fromOpaque(data!).takeUnretainedValue()
            if id == PW_ID_CORE && res == -EPIPE {
                player.state.withLock {
                    $0.disconnected = true
                    $0.streaming = false
                }
                player.onStreamChange?()
            } else if id == PW_ID_CORE {
                player.logger.warning("PipeWire: \(message.map { String(cString: $0) } ?? "error \(res)")")
            }
        }
        return events
    }
}
