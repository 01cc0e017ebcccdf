import CLV2
import CLilv

/// URIs the LV2 host uses.
enum LV2URI {
    static let audioPort = "http://lv2plug.in/ns/lv2core#AudioPort"
    static let controlPort = "http://lv2plug.in/ns/lv2core#ControlPort"
    static let cvPort = "http://lv2plug.in/ns/lv2core#CVPort"
    static let inputPort = "http://lv2plug.in/ns/lv2core#InputPort"
    static let atomPort = "http://lv2plug.in/ns/ext/atom#AtomPort"
    static let isSideChain = "http://lv2plug.in/ns/lv2core#isSideChain"
    static let connectionOptional = "http://lv2plug.in/ns/lv2core#connectionOptional"
    static let reportsLatency = "http://lv2plug.in/ns/lv2core#reportsLatency"
    static let integer = "http://lv2plug.in/ns/lv2core#integer"
    static let portGroup = "http://lv2plug.in/ns/ext/port-groups#group"
    static let sideChainOf = "http://lv2plug.in/ns/ext/port-groups#sideChainOf"
    static let minimumSize = "http://lv2plug.in/ns/ext/resize-port#minimumSize"
    static let preset = "http://lv2plug.in/ns/ext/presets#Preset"
    static let label = "http://www.w3.org/2000/01/rdf-schema#label"
    static let threadSafeRestore = "http://lv2plug.in/ns/ext/state#threadSafeRestore"

    /// Features graphhost provides to plugins.
    static let supportedFeatures: Set<String> = [
        "http://lv2plug.in/ns/ext/urid#map",
        "http://lv2plug.in/ns/ext/urid#unmap",
        "http://lv2plug.in/ns/ext/options#options",
        "http://lv2plug.in/ns/ext/buf-size#boundedBlockLength",
        "http://lv2plug.in/ns/ext/log#log",
        "http://lv2plug.in/ns/ext/worker#schedule",
        "http://lv2plug.in/ns/ext/state#mapPath",
        "http://lv2plug.in/ns/ext/state#makePath",
        "http://lv2plug.in/ns/ext/state#freePath",
        "http://lv2plug.in/ns/ext/state#loadDefaultState",
        "http://lv2plug.in/ns/lv2core#hardRTCapable",
        "http://lv2plug.in/ns/lv2core#inPlaceBroken",
        "http://lv2plug.in/ns/lv2core#isLive",
    ]
}

/// One port of an LV2 plugin as graphhost sees it.
public struct LV2Port: Sendable {
    public enum Kind: String, Sendable { case audio, control, cv, atom, other }
    public var index: Int
    public var symbol: String
    public var name: String
    public var kind: Kind
    public var isInput: Bool
    public var minimum: Float?
    public var maximum: Float?
    public var defaultValue: Float?
    public var isSideChain: Bool
    public var isOptional: Bool
    public var isInteger: Bool
    public var reportsLatency: Bool
    /// Bytes an atom port's buffer must hold at least.
    public var minimumSize: Int

    /// Audio or CV (CV ports are treated as audio).
    public var carriesAudio: Bool { kind == .audio || kind == .cv }

    public var description: String {
        var text = "\(index) \(symbol) (\(kind.rawValue) \(isInput ? "in" : "out")"
        if isSideChain { text += ", sidechain" }
        if kind == .control, let lo = minimum, let hi = maximum {
            text += ", \(Format.number(Double(lo)))…\(Format.number(Double(hi)))"
            if let d = defaultValue { text += " default \(Format.number(Double(d)))" }
        }
        return text + ")"
    }
}

/// A preset of an LV2 plugin.
public struct LV2Preset: Sendable {
    public var uri: String
    public var label: String
}

/// What lilv knows about one plugin: ports, features and presets (control world).
public struct LV2PluginInfo: Sendable {
    public let uri: String
    public let name: String
    public let ports: [LV2Port]
    public let requiredFeatures: [String]
    public let optionalFeatures: [String]

    /// Reads the plugin's description; call inside `LV2World.withWorld`.
    init(world w: OpaquePointer, plugin: OpaquePointer) {
        uri = String(cString: lilv_node_as_uri(lilv_plugin_get_uri(plugin)))
        let nameNode = lilv_plugin_get_name(plugin)
        name = lilvString(nameNode) ?? uri
        lilv_node_free(nameNode)
        func uris(_ nodes: UnsafeMutableRawPointer?) -> [String] {
            var r: [String] = []
            forEachNode(nodes) { r.append(lilvString($0) ?? "") }
            lilv_nodes_free(nodes)
            return r
        }
        requiredFeatures = uris(lilv_plugin_get_required_features(plugin))
        optionalFeatures = uris(lilv_plugin_get_optional_features(plugin))
        var ports: [LV2Port] = []
        let classes = [LV2URI.audioPort, LV2URI.controlPort, LV2URI.cvPort, LV2URI.inputPort, LV2URI.atomPort,
                       LV2URI.isSideChain, LV2URI.connectionOptional, LV2URI.reportsLatency, LV2URI.integer,
                       LV2URI.portGroup, LV2URI.sideChainOf, LV2URI.minimumSize].map { (text: String) -> OpaquePointer in lilv_new_uri(w, text)! }
        defer { classes.forEach { lilv_node_free($0) } }
        let (audio, control, cv, input, atom, sideChain, optional, latency, integer, group, sideChainOf, minimumSize) =
            (classes[0], classes[1], classes[2], classes[3], classes[4], classes[5], classes[6], classes[7], classes[8], classes[9], classes[10], classes[11])
        for i in 0..<lilv_plugin_get_num_ports(plugin) {
            guard let port = lilv_plugin_get_port_by_index(plugin, i) else { continue }
            let kind: LV2Port.Kind = lilv_port_is_a(plugin, port, audio) ? .audio
                : lilv_port_is_a(plugin, port, control) ? .control
                : lilv_port_is_a(plugin, port, cv) ? .cv
                : lilv_port_is_a(plugin, port, atom) ? .atom : .other
            var def: OpaquePointer?, lo: OpaquePointer?, hi: OpaquePointer?
            lilv_port_get_range(plugin, port, &def, &lo, &hi)
            defer { lilv_node_free(def); lilv_node_free(lo); lilv_node_free(hi) }
            func float(_ n: OpaquePointer?) -> Float? { n.map { Float(lilv_node_as_float($0)) } }
            var isSideChain = lilv_port_has_property(plugin, port, sideChain)
            if let g = lilv_port_get(plugin, port, group) {
                if lilv_world_ask(w, g, sideChainOf, nil) { isSideChain = true }
                lilv_node_free(g)
            }
            var minSize = 0
            if let m = lilv_port_get(plugin, port, minimumSize) {
                minSize = Int(lilv_node_as_int(m))
                lilv_node_free(m)
            }
            let nameNode = lilv_port_get_name(plugin, port)
            defer { lilv_node_free(nameNode) }
            let symbol = lilvString(lilv_port_get_symbol(plugin, port)) ?? "port\(i)"
            ports.append(LV2Port(index: Int(i), symbol: symbol, name: lilvString(nameNode) ?? symbol, kind: kind,
                                 isInput: lilv_port_is_a(plugin, port, input), minimum: float(lo), maximum: float(hi),
                                 defaultValue: float(def), isSideChain: isSideChain,
                                 isOptional: lilv_port_has_property(plugin, port, optional),
                                 isInteger: lilv_port_has_property(plugin, port, integer),
                                 reportsLatency: lilv_port_has_property(plugin, port, latency), minimumSize: minSize))
        }
        self.ports = ports
    }

    /// Required features graphhost does not provide.
    public var unsupportedFeatures: [String] { requiredFeatures.filter { !LV2URI.supportedFeatures.contains($0) } }

    public func audioPorts(input: Bool) -> [LV2Port] { ports.filter { $0.carriesAudio && $0.isInput == input && !$0.isSideChain } }
    public var controlInputs: [LV2Port] { ports.filter { $0.kind == .control && $0.isInput } }
    public var latencyPort: LV2Port? { ports.first { $0.kind == .control && !$0.isInput && $0.reportsLatency } }

    /// The plugin's presets (loading their resources on first use).
    public var presets: [LV2Preset] {
        let result = LV2World.shared.withPlugin(uri) { w, plugin in
            let presetClass = lilv_new_uri(w, LV2URI.preset), labelNode = lilv_new_uri(w, LV2URI.label)
            defer { lilv_node_free(presetClass); lilv_node_free(labelNode) }
            var result: [LV2Preset] = []
            let related = lilv_plugin_get_related(plugin, presetClass)
            forEachNode(related) { preset in
                lilv_world_load_resource(w, preset)
                let labels = lilv_world_find_nodes(w, preset, labelNode, nil)
                var label = ""
                forEachNode(labels) { label = lilvString($0) ?? "" }
                lilv_nodes_free(labels)
                let uri = lilvString(preset) ?? ""
                result.append(LV2Preset(uri: uri, label: label.isEmpty ? uri : label))
            }
            lilv_nodes_free(related)
            return result
        }
        return (result ?? []).sorted { $0.label < $1.label }
    }

    /// Whether the plugin asks for its default state (state:loadDefaultState) to be restored after instantiation.
    var wantsDefaultState: Bool {
        (requiredFeatures + optionalFeatures).contains("http://lv2plug.in/ns/ext/state#loadDefaultState")
    }

    /// Whether restoring state may happen while run() is being called (state:threadSafeRestore).
    var supportsThreadSafeRestore: Bool {
        (requiredFeatures + optionalFeatures).contains(LV2URI.threadSafeRestore)
    }

    /// Finds a preset by label (case-insensitive) or URI.
    public func preset(_ labelOrURI: String) -> LV2Preset? {
        presets.first { $0.uri == labelOrURI || $0.label.lowercased() == labelOrURI.lowercased() }
    }
}

extension LV2PluginInfo {
    /// The port values a preset stores (Float or Int atoms), by symbol.
    public func portValues(of preset: LV2Preset) -> [String: Float] {
        LV2World.shared.withState(preset.uri) { state in Self.portValues(of: state) } ?? [:]
    }

    private static func portValues(of state: OpaquePointer) -> [String: Float] {
        final class Box { var values: [String: Float] = [:] }
        let box = Box()
        let floatType = URIDMap.shared.map("http://lv2plug.in/ns/ext/atom#Float")
        let intType = URIDMap.shared.map("http://lv2plug.in/ns/ext/atom#Int")
        let doubleType = URIDMap.shared.map("http://lv2plug.in/ns/ext/atom#Double")
        let longType = URIDMap.shared.map("http://lv2plug.in/ns/ext/atom#Long")
        let boolType = URIDMap.shared.map("http://lv2plug.in/ns/ext/atom#Bool")
        struct Context { var box: Unmanaged<Box>; var types: (UInt32, UInt32, UInt32, UInt32, UInt32) }
        var context = Context(box: .passUnretained(box), types: (floatType, intType, doubleType, longType, boolType))
        withUnsafeMutablePointer(to: &context) { ctx in
            lilv_state_emit_port_values(state, { symbol, user, value, size, type in
                guard let symbol, let user, let value else { return }
                let c = user.assumingMemoryBound(to: Context.self).pointee
                let v: Float?
                switch type {
                case c.types.0: v = value.load(as: Float.self)
                case c.types.1, c.types.4: v = Float(value.load(as: Int32.self))
                case c.types.2: v = Float(value.load(as: Double.self))
                case c.types.3: v = Float(value.load(as: Int64.self))
                default: v = nil
                }
                if let v { c.box.takeUnretainedValue().values[String(cString: symbol)] = v }
            }, ctx)
        }
        return box.values
    }
}
