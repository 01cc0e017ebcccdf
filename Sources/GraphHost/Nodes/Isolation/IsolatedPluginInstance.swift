import Atomics
import CIsolationGlue
import FoundationEssentials
import Glibc
import GraphHostCore
import Logging
import Synchronization

/// A plugin node whose plugin runs in a `graphhost plugin-host` helper process. The render world plays its output
/// one block late through an `IsolatedKernel`; commands go to the helper and come back answered; a supervisor thread
/// watches the helper, and after a crash or a hang restarts it with the node's current settings (control values,
/// preset, properties, bypass) and the plugin's own state as last saved, backing off; a plugin that faults more than
/// `PluginIsolation.maxRestarts` times within `PluginIsolation.restartWindowSeconds` stays off (a crash loop), one
/// that faults now and then is restarted every time.
final class IsolatedPluginInstance: NodeInstance, HostedPlugin, @unchecked Sendable {
    let id: String
    /// How messages name the plugin (its URI, or a LADSPA plugin's label and library).
    let pluginName: String
    let format: GraphFormat
    let kernelPointer: UnsafeMutablePointer<IsolatedKernel>
    let parameters: [ParameterDescriptor]
    let presetNames: [String]
    let mayMakeSoundUnprompted: Bool
    /// The latency the plugin itself reports (frames), measured by its helper.
    let pluginLatency: Int
    /// Whether the plugin keeps state of its own, which the helper saves after each command and every
    /// `PluginIsolation.saveSeconds`, and a restarted helper restores.
    let keepsState: Bool
    private let shared: UnsafeMutableRawPointer
    private let sharedBytes: Int
    private let descriptors: (shared: Int32, wake: Int32, done: Int32, stop: Int32)
    private let memory: UnsafeMutablePointer<Float>
    private let links: String
    private var supervisor: JoinableThread?
    static let logger = Logger(label: "graphhost.isolation")

    private struct State {
        var helper: PluginHelperProcess?
        var definition: any NodeDefinition
        var settings: JSONValue
        var live = false
        /// When the faults of the last `PluginIsolation.restartWindowSeconds` came (monotonic ns).
        var recentFaults: [Int] = []
        var processEvents: [String] = []
        var closing = false
        /// The plugin's own state as its helper last saved it (`SavedPluginState`), and when (monotonic ns).
        var savedState = ""
        var savedAt = 0
        var report = PluginReport(nil)
        var reportedAt = Int.min / 2
    }
    private let state: Mutex<State>

    /// Starts the helper for `definition` (whose identity `settings` are, e.g. `{"type":"lv2","uri":…}`) and waits
    /// until it hosts the plugin; throws what the helper said when it cannot.
    /// `sendsEvents`: the plugin's output is MIDI. `links` are the ports the node links by name, as the helper takes
    /// them (`--links`; empty: none).
    init(
        id: String, definition: any NodeDefinition, settings: JSONValue, pluginName: String, format: GraphFormat,
        dryIsSilence: Bool, sendsEvents: Bool = false, links: String = ""
    ) throws {
        self.id = id
        self.pluginName = pluginName
        self.format = format
        parameters = definition.descriptor.parameters
        presetNames = definition.descriptor.presets
        mayMakeSoundUnprompted = dryIsSilence
        let frames = format.nominalBlockLength
        let channels = format.channels
        let (inputBuses, outputBuses) = (definition.inputBuses, definition.outputBuses)
        sharedBytes = IsolatedBlock.byteCount(
            channels: channels, frames: frames, inputBuses: inputBuses, outputBuses: outputBuses)
        let sharedFD = gh_isolation_memfd("graphhost-\(id)", sharedBytes, 0)
        let wake = gh_isolation_eventfd(0)
        let done = gh_isolation_eventfd(0)
        let stop = gh_isolation_eventfd(0)
        let closeAll = { [sharedFD, wake, done, stop].filter { $0 >= 0 }.forEach { Glibc.close($0) } }
        guard sharedFD >= 0, wake >= 0, done >= 0, stop >= 0 else {
            let code = errno
            closeAll()
            throw PluginIsolationError.system("memfd_create/eventfd", code)
        }
        guard let mapped = mmap(nil, sharedBytes, PROT_READ | PROT_WRITE, MAP_SHARED, sharedFD, 0),
            mapped != MAP_FAILED
        else {
            let code = errno
            closeAll()
            throw PluginIsolationError.system("mmap", code)
        }
        RenderMemory.pin(mapped, bytes: sharedBytes)
        shared = mapped
        descriptors = (sharedFD, wake, done, stop)
        let settings = Self.helperSettings(definition, identity: settings)
        self.links = links
        // The URIDs that cross in the shared block, mapped before the helper copies the table.
        for uri in [LV2URI.midiEvent, "http://lv2plug.in/ns/ext/atom#Sequence"] { _ = URIDMap.shared.map(uri) }
        let helper: PluginHelperProcess
        do {
            helper = try PluginHelperProcess(
                arguments: Self.arguments(id: id, settings: settings, links: links, format: format, live: false),
                shared: sharedFD, wake: wake, done: done, timeout: PluginIsolation.startSeconds)
        } catch {
            RenderMemory.unpin(mapped)
            munmap(mapped, sharedBytes)
            closeAll()
            throw PluginIsolationError.refused("node '\(id)' (\(pluginName)): \(error)")
        }
        let ready = helper.readyLine.split(separator: " ")
        pluginLatency = ready.dropFirst().first.flatMap { Int($0) } ?? 0
        keepsState = ready.dropFirst(2).first == "1"
        let block = IsolatedBlock(
            base: mapped, channels: channels, frames: frames, inputBuses: inputBuses, outputBuses: outputBuses)
        memory = .allocateRender(capacity: IsolatedKernel.memoryFloats(block))
        kernelPointer = .allocateRender(capacity: 1)
        kernelPointer.initialize(
            to: IsolatedKernel(
                block: block, wakeFD: wake, doneFD: done, dryIsSilence: dryIsSilence,
                eventBus: (0..<inputBuses).first { definition.carriesEvents(bus: $0) } ?? -1,
                eventOutput: sendsEvents, midiEventType: URIDMap.shared.map(LV2URI.midiEvent),
                fadeSamples: Int(0.02 * Double(format.sampleRate)),
                offlineWaitMillis: PluginIsolation.offlineWaitMillis, memory: memory))
        state = Mutex(State(helper: helper, definition: definition, settings: settings))
    }

    /// The node's settings as the helper reads them: its identity and what live commands changed.
    static func helperSettings(_ definition: any NodeDefinition, identity: JSONValue) -> JSONValue {
        definition.liveSettings.reduce(identity) { $0.setting($1.key, $1.value) }
    }

    static func arguments(id: String, settings: JSONValue, links: String, format: GraphFormat, live: Bool)
        -> [String]
    {
        [
            "--id", id, "--node", settings.compact, "--rate", "\(format.sampleRate)", "--channels",
            "\(format.channels)", "--frames", "\(format.nominalBlockLength)", "--live", live ? "1" : "0",
        ] + (links.isEmpty ? [] : ["--links", links])
    }

    var kernel: RenderStep.Kernel { .isolated(kernelPointer) }

    /// The block it plays late, and what the plugin reports.
    var latency: Int { format.nominalBlockLength + pluginLatency }

    func start() {
        supervisor = JoinableThread(name: "isolation \(id)") { [self] in supervise() }
    }

    func setRealTime(_ live: Bool) {
        kernelPointer.pointee.offlineWaitMillis = live ? 0 : PluginIsolation.offlineWaitMillis
        state.withLock { state in
            state.live = live
            _ = try? state.helper?.request("live \(live ? 1 : 0)", timeout: PluginIsolation.answerSeconds)
        }
    }

    /// Asks the helper, which holds the plugin, whether `command` applies.
    func check(_ command: NodeCommand) throws {
        try state.withLock { state in
            _ = try ask(&state, "check", command)
        }
    }

    /// Carries the command out in the helper; the node's settings follow, so a restarted helper gets them.
    func messages(for command: NodeCommand) throws -> [ControlMessage] {
        try state.withLock { state in
            _ = try ask(&state, "do", command)
            state.definition = state.definition.applying(command)
            save(&state)
        }
        return []
    }

    /// Asks the helper for the plugin's own state and keeps it (a helper that cannot answer keeps the last one).
    private func save(_ state: inout State) {
        guard keepsState, let helper = state.helper, helper.ended == nil else { return }
        state.savedAt = MonotonicClock.nanos()
        guard let answer = try? helper.request("state", timeout: PluginIsolation.answerSeconds) else { return }
        state.savedState = String(answer.dropFirst("ok".count).drop { $0 == " " })
    }

    private func ask(_ state: inout State, _ verb: String, _ command: NodeCommand) throws -> String {
        guard let helper = state.helper, helper.ended == nil else {
            throw PluginIsolationError.refused(
                "node '\(id)' (\(pluginName)): its plugin's process is being restarted; nothing changed")
        }
        let request = NodeRequest(node: id, action: command)
        return try helper.request("\(verb) \(request)", timeout: PluginIsolation.answerSeconds)
    }

    /// What happened to the helper so far, each a sentence naming the node, the plugin and the event.
    var processEvents: [String] { state.withLock { $0.processEvents } }

    // The helper's plugin answers for itself; the host sees a plugin of fixed block length and latency.
    var nominalBlockLength: Int { format.nominalBlockLength }
    var takesNominalBlockLength: Bool { false }
    func setNominalBlockLength(_ frames: Int, concurrent: Bool, send: (ControlMessage) throws -> Void) throws -> Bool {
        false
    }
    var loadsFiles: Bool { false }
    func drainLog() {}
    var reportsLatency: Bool { false }
    func measuredLatency(maxFrames: Int, channels: Int) -> Float? { nil }
    // What the helper reads from the plugin, asked at most every `reportMillis` (one status reads all three).
    var silencedSlices: Int { report().silencedSlices }
    var propertyValues: [String: String] { report().properties }
    var controlOutputs: [String: Float] { report().outputs }

    /// The helper's report (the last one while it is being restarted).
    private func report() -> PluginReport {
        state.withLock { state in
            let now = MonotonicClock.nanos()
            if now - state.reportedAt > Self.reportMillis * 1_000_000, let helper = state.helper, helper.ended == nil,
                let answer = try? helper.request("report", timeout: PluginIsolation.answerSeconds),
                let json = try? JSONParser.parse(String(answer.dropFirst("ok".count)))
            {
                state.report = PluginReport(json: json)
                state.reportedAt = now
            }
            return state.report
        }
    }
    static let reportMillis = 50
    var hostedPlugin: (any HostedPlugin)? { self }

    /// Watches the helper: its end (a crash) or blocks unanswered in a row (a hang, which kills it) is a fault;
    /// each fault restarts it after a pause that grows with the faults of the window, until the bound. It looks every
    /// 20 ms while the node renders (blocks posted or missed), every second while it does not (a paused or resting
    /// graph), and saves the plugin's state only after blocks ran.
    private func supervise() {
        // Render calls post a block or miss one: either count moves while the node renders.
        let (posted, missed) = (kernelPointer.pointee.block.posted, kernelPointer.pointee.missed)
        var (seen, savedWhen) = (-1, -1)
        while true {
            let (helper, closing, live) = state.withLock { ($0.helper, $0.closing, $0.live) }
            if closing { return }
            guard let helper else {
                if waitForStop(milliseconds: -1) { return }
                continue
            }
            var fds = [
                pollfd(fd: helper.pidfd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: descriptors.stop, events: Int16(POLLIN), revents: 0),
            ]
            let now = posted.load(ordering: .relaxed) &+ missed.load(ordering: .relaxed)
            _ = poll(&fds, 2, now == seen ? 1000 : 20)
            seen = now
            if fds[1].revents != 0 { return }
            var reason: String?
            if fds[0].revents != 0 {
                reason = state.withLock { _ in helper.reap() ? helper.ended : nil }
            } else {
                let missed = kernelPointer.pointee.missedInARow.load(ordering: .relaxed)
                if missed >= (live ? PluginIsolation.hangBlocks : 1) {
                    state.withLock { _ in helper.kill() }
                    reason = "it did not answer for \(missed) block(s), so its process was killed"
                }
            }
            guard let reason else {
                if now != savedWhen {
                    state.withLock { state in
                        if MonotonicClock.nanos() - state.savedAt > Int(PluginIsolation.saveSeconds * 1e9) {
                            save(&state)
                            savedWhen = now
                        }
                    }
                }
                continue
            }
            restart(after: reason)
        }
    }

    /// Notes the fault and starts a new helper (or gives up past the bound).
    private func restart(after reason: String) {
        kernelPointer.pointee.gone.store(true, ordering: .relaxed)
        let attempt = state.withLock { state -> Int in
            state.helper?.stop()
            state.helper = nil
            let now = MonotonicClock.nanos()
            let window = Int(PluginIsolation.restartWindowSeconds * 1e9)
            state.recentFaults = state.recentFaults.filter { now - $0 < window } + [now]
            let attempt = state.recentFaults.count
            let seconds = Int(PluginIsolation.restartWindowSeconds)
            let said =
                attempt > PluginIsolation.maxRestarts
                ? "node '\(id)' (\(pluginName)): \(reason); after \(PluginIsolation.maxRestarts) restarts within "
                    + "\(seconds) s it stays off and the node plays its dry input"
                : "node '\(id)' (\(pluginName)): \(reason); the node plays its dry input and the plugin restarts "
                    + "(\(attempt) of \(PluginIsolation.maxRestarts) within \(seconds) s)"
            state.processEvents.append(said)
            Self.logger.error("\(said)")
            return attempt
        }
        guard attempt <= PluginIsolation.maxRestarts else {
            kernelPointer.pointee.retired.store(true, ordering: .relaxed)
            return
        }
        if waitForStop(milliseconds: Int32(100 << min(attempt - 1, 6))) { return }
        let failure = state.withLock { state -> String? in
            do {
                state.helper = try PluginHelperProcess(
                    arguments: Self.arguments(
                        id: id, settings: Self.helperSettings(state.definition, identity: state.settings),
                        links: links, format: format, live: state.live),
                    shared: descriptors.shared, wake: descriptors.wake, done: descriptors.done,
                    timeout: PluginIsolation.startSeconds, savedState: state.savedState)
                kernelPointer.pointee.gone.store(false, ordering: .relaxed)
                let said =
                    "node '\(id)' (\(pluginName)): the plugin runs again in a new process"
                    + (state.savedState.isEmpty ? "" : ", with the state it had saved")
                state.processEvents.append(said)
                Self.logger.notice("\(said)")
                return nil
            } catch {
                return "\(error)"
            }
        }
        if let failure { restart(after: failure) }
    }

    /// Waits up to `milliseconds` (-1: for ever) for `close`; true when it came.
    private func waitForStop(milliseconds: Int32) -> Bool {
        var fd = pollfd(fd: descriptors.stop, events: Int16(POLLIN), revents: 0)
        return poll(&fd, 1, milliseconds) > 0
    }

    func close() {
        state.withLock { $0.closing = true }
        _ = gh_isolation_signal(descriptors.stop)
        supervisor?.join()
        state.withLock { state in
            state.helper?.stop()
            state.helper = nil
        }
        kernelPointer.pointee.destroy()
        kernelPointer.deinitialize(count: 1).deallocateRender()
        memory.deallocateRender()
        RenderMemory.unpin(shared)
        munmap(shared, sharedBytes)
        for fd in [descriptors.shared, descriptors.wake, descriptors.done, descriptors.stop] { Glibc.close(fd) }
    }
}
