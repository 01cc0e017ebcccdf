import Atomics
import CIsolationGlue
import CThreadGlue
import FoundationEssentials
import Glibc
import GraphHostCore

/// The helper process of an isolated plugin node (`graphhost plugin-host`): it reads the node's settings, hosts the
/// plugin in place (lilv, its worker, state, options and URID map all in this process), renders each block the host
/// posts in the shared memory on descriptor 3 when descriptor 4 wakes it, signals descriptor 5, and answers the
/// host's commands on standard input, one line each: "check REQUEST", "do REQUEST", "live 0|1", "state" (answered
/// with the plugin's own state, `SavedPluginState`), "report" (a `PluginReport`), after two first lines: "urids
/// URI…", the host's URID table, which it takes as its own, and "state SAVED", the state an earlier helper saved,
/// which it restores before it serves. It ends when its input closes, and with the host.
public enum PluginHostServer {
    public struct Options {
        public var id: String
        public var node: String
        public var sampleRate: Int
        public var channels: Int
        public var frames: Int
        public var live: Bool
        /// The ports the node links by name (`LV2PortLinks` as JSON; empty: none).
        public var links: String
        public init(
            id: String, node: String, sampleRate: Int, channels: Int, frames: Int, live: Bool, links: String = ""
        ) {
            (self.id, self.node, self.sampleRate, self.channels) = (id, node, sampleRate, channels)
            (self.frames, self.live, self.links) = (frames, live, links)
        }
    }

    static func say(_ line: String) {
        let bytes = Array((String(line.map { $0 == "\n" ? " " : $0 }) + "\n").utf8)
        _ = bytes.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count) }
    }

    /// Runs the helper; returns its exit status.
    public static func run(_ options: Options) -> Int32 {
        gh_isolation_die_with_parent()
        PluginIsolation.inHelper = true
        // The host's URID table comes first, before anything here maps a URI.
        let table = Swift.readLine() ?? ""
        guard table.hasPrefix("urids"), URIDMap.shared.take(table.split(separator: " ").dropFirst().map(String.init))
        else {
            say("error the host's URID table could not be taken")
            return 1
        }
        // Then the plugin's own state, saved by an earlier helper (empty: none).
        let savedState = String((Swift.readLine() ?? "").dropFirst("state".count).drop { $0 == " " })
        let instance: NodeInstance
        let definition: any NodeDefinition
        var format = GraphFormat(sampleRate: options.sampleRate, channels: options.channels, maxFrames: options.frames)
        format.nominalFrames = options.frames
        do {
            (definition, instance) = try host(options, format: format)
        } catch {
            say("error \(error)")
            return 1
        }
        guard case .lv2 = instance.kernel else {
            say("error node '\(options.id)' is not a plugin node")
            return 1
        }
        let (inputBuses, outputBuses) = (definition.inputBuses, definition.outputBuses)
        let bytes = IsolatedBlock.byteCount(
            channels: options.channels, frames: options.frames, inputBuses: inputBuses, outputBuses: outputBuses)
        guard let mapped = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0), mapped != MAP_FAILED else {
            say("error mmap of the shared block failed: \(String(cString: strerror(errno)))")
            return 1
        }
        let block = IsolatedBlock(
            base: mapped, channels: options.channels, frames: options.frames, inputBuses: inputBuses,
            outputBuses: outputBuses)
        let inputs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocateRender(capacity: inputBuses)
        for bus in 0..<inputBuses { (inputs + bus).initialize(to: block.input(bus)) }
        let extraOutputs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocateRender(capacity: outputBuses)
        for bus in 1..<max(outputBuses, 1) { (extraOutputs + bus - 1).initialize(to: block.output(bus)) }
        let step = IsolatedHelperStep(
            block: block,
            step: RenderStep(
                kernel: instance.kernel, inputs: inputs, inputCount: inputBuses, output: block.output,
                extraOutputs: outputBuses > 1 ? extraOutputs : nil),
            messages: ControlQueue.allocate(), doneFD: 5)
        let send: (ControlMessage) throws -> Void = { message in
            guard step.send(message) else { throw PluginIsolationError.refused("too many changes at once") }
        }
        let plugin = instance as? LV2Instance
        do {
            for command in definition.initialCommands { try instance.perform(command, concurrent: true, send: send) }
            if !savedState.isEmpty, let plugin {
                try plugin.restore(savedStates: try SavedPluginState.decode(savedState), concurrent: false, send: send)
            }
        } catch {
            say("error \(error)")
            return 1
        }
        var latency = 0
        if let plugin = instance.hostedPlugin, plugin.reportsLatency,
            let reported = plugin.measuredLatency(maxFrames: options.frames, channels: options.channels),
            reported.isFinite
        {
            latency = max(0, Int(reported.rounded()))
        }
        instance.setRealTime(options.live)
        instance.start()
        step.start()
        // The render thread and this one share only the message queue (single producer, single consumer).
        nonisolated(unsafe) let served = step
        // Plain memory for the render thread (no reference counting there); it lives as long as the process.
        let live = UnsafeAtomic<Bool>.create(options.live)
        DetachedThread.start(name: "plugin-host render") {
            gh_enable_flush_to_zero()
            var realTime = false
            while true {
                if gh_isolation_wait(4) != 0 && errno != EINTR { exit(0) }
                if live.load(ordering: .relaxed) != realTime {
                    // Live, the helper's thread takes the scheduling of PipeWire's data threads where it may.
                    realTime.toggle()
                    _ = RealTimeScheduling.setCurrentThread(realTime: realTime)
                }
                while served.serve() {}
            }
        }
        say("ready \(latency) \(plugin?.keepsState == true ? 1 : 0)")
        while let line = Swift.readLine() {
            let (verb, rest) =
                line.firstIndex(of: " ").map { (line[..<$0], line[line.index(after: $0)...]) }
                ?? (line[...], "")
            do {
                var answer = "ok"
                switch verb {
                case "state":
                    answer += " " + SavedPluginState.encode(plugin?.savedStates() ?? [])
                case "report":
                    answer += " " + PluginReport(instance.hostedPlugin).json.compact
                case "live":
                    instance.setRealTime(rest == "1")
                    live.store(rest == "1", ordering: .relaxed)
                case "check", "do":
                    let command = try NodeRequest.parse(String(rest)).action
                    if verb == "check" {
                        try instance.check(command)
                    } else {
                        try instance.perform(command, concurrent: true, send: send)
                    }
                default:
                    throw PluginIsolationError.refused("unknown request '\(verb)'")
                }
                instance.hostedPlugin?.drainLog()
                say(answer)
            } catch {
                instance.hostedPlugin?.drainLog()
                say("error \(error)")
            }
        }
        exit(0)
    }

    /// Reads the node's settings and hosts its plugin in this process.
    static func host(_ options: Options, format: GraphFormat) throws -> (any NodeDefinition, NodeInstance) {
        let object = try JSONParser.parse(options.node)
        guard let type = object["type"]?.stringValue, let kind = NodeKinds.named(type) else {
            throw PluginIsolationError.refused("the node's settings name no node type")
        }
        var issues = GraphIssues(file: "node '\(options.id)'")
        let context = NodeContext(
            format: format, baseDirectory: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        guard
            var definition = kind.parseDefinition(
                NodeSettings(object: object, path: "node"), context: context, issues: &issues), issues.errors.isEmpty
        else {
            throw PluginIsolationError.refused(issues.errors.map(\.description).joined(separator: "; "))
        }
        if !options.links.isEmpty, var plugin = definition as? LV2Node {
            try plugin.take(LV2PortLinks(json: options.links))
            definition = plugin
        }
        return (definition, try definition.instantiate(id: options.id, format: format))
    }
}
