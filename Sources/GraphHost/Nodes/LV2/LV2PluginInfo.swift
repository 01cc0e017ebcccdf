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
    static let sampleRate = "http://lv2plug.in/ns/lv2core#sampleRate"
    static let toggled = "http://lv2plug.in/ns/lv2core#toggled"
    static let enumeration = "http://lv2plug.in/ns/lv2core#enumeration"
    static let logarithmic = "http://lv2plug.in/ns/ext/port-props#logarithmic"
    static let designation = "http://lv2plug.in/ns/lv2core#designation"
    static let midiEvent = "http://lv2plug.in/ns/ext/midi#MidiEvent"
    static let timePosition = "http://lv2plug.in/ns/ext/time#Position"
    static let freeWheeling = "http://lv2plug.in/ns/lv2core#freeWheeling"
    static let units = "http://lv2plug.in/ns/extensions/units#"
    static let unit = "http://lv2plug.in/ns/extensions/units#unit"
    static let unitSymbol = "http://lv2plug.in/ns/extensions/units#symbol"
    static let hardRTCapable = "http://lv2plug.in/ns/lv2core#hardRTCapable"
    static let writable = "http://lv2plug.in/ns/ext/patch#writable"
    static let range = "http://www.w3.org/2000/01/rdf-schema#range"
    static let controlDesignation = "http://lv2plug.in/ns/lv2core#control"
    static let atomPath = "http://lv2plug.in/ns/ext/atom#Path"
    static let atomString = "http://lv2plug.in/ns/ext/atom#String"
    static let atomFloat = "http://lv2plug.in/ns/ext/atom#Float"
    static let atomDouble = "http://lv2plug.in/ns/ext/atom#Double"
    static let atomInt = "http://lv2plug.in/ns/ext/atom#Int"
    static let atomLong = "http://lv2plug.in/ns/ext/atom#Long"
    static let atomBool = "http://lv2plug.in/ns/ext/atom#Bool"
    static let atomURID = "http://lv2plug.in/ns/ext/atom#URID"
    static let atomObject = "http://lv2plug.in/ns/ext/atom#Object"
    static let patchSet = "http://lv2plug.in/ns/ext/patch#Set"
    static let patchGet = "http://lv2plug.in/ns/ext/patch#Get"
    static let patchProperty = "http://lv2plug.in/ns/ext/patch#property"
    static let patchValue = "http://lv2plug.in/ns/ext/patch#value"

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
    /// lv2:sampleRate as the plugin declares it: the bounds and default are fractions of the sample rate. False
    /// once `at(sampleRate:)` has scaled them to the graph's rate (the value itself is always in Hz).
    public var boundsInSampleRates = false
    /// lv2:toggled (off at 0 or below, on above), lv2:enumeration (only the scale points are valid) and
    /// pprops:logarithmic (shown on a log scale).
    public var isToggled = false
    public var isEnumeration = false
    public var isLogarithmic = false
    /// Named values (lv2:scalePoint), by value.
    public var scalePoints: [LV2ScalePoint] = []
    /// The unit its values are in (units:unit, as its symbol: "dB", "Hz"), "" when it declares none.
    public var unit = ""
    /// What the port is for (lv2:designation), e.g. lv2:freeWheeling, which the host sets.
    public var designation: String?
    /// An atom port that carries MIDI events (atom:supports midi:MidiEvent).
    public var supportsMIDI = false
    /// An atom input that takes the host's transport (atom:supports time:Position).
    public var supportsTimePosition = false

    /// Audio ports are wired to the bus; CV ports get a buffer of their own holding their value.
    public var carriesAudio: Bool { kind == .audio }

    /// The port at a sample rate: lv2:sampleRate bounds and default become Hz.
    public func at(sampleRate: Int) -> LV2Port {
        guard boundsInSampleRates else { return self }
        var port = self
        let rate = Float(sampleRate)
        port.minimum = minimum.map { $0 * rate }
        port.maximum = maximum.map { $0 * rate }
        // A default outside the fractional range that fits the range in Hz was written in Hz (swh singlePara: 440).
        if let d = defaultValue, let lo = minimum, let hi = maximum, !(lo...hi).contains(d),
            (lo * rate...hi * rate).contains(d)
        {
            port.defaultValue = d
        } else {
            port.defaultValue = defaultValue.map { $0 * rate }
        }
        port.boundsInSampleRates = false
        return port
    }

    public var description: String {
        var text = "\(index) \(symbol) (\(kind.rawValue) \(isInput ? "in" : "out")"
        if isSideChain { text += ", sidechain" }
        if kind == .control, let lo = minimum, let hi = maximum {
            let unit = boundsInSampleRates ? " × sample rate" : ""
            text += ", \(Format.number(lo))…\(Format.number(hi))\(unit)"
            if let d = defaultValue { text += " default \(Format.number(d))\(unit)" }
        }
        var properties: [String] = []
        if isToggled { properties.append("toggle") }
        if isInteger && !isToggled && !isEnumeration { properties.append("integer") }
        if isLogarithmic { properties.append("logarithmic") }
        if !properties.isEmpty { text += ", " + properties.joined(separator: ", ") }
        if !scalePoints.isEmpty {
            text +=
                ", " + (isEnumeration ? "one of " : "named ")
                + scalePoints.map { "\($0.label)=\(Format.number($0.value))" }.joined(separator: " | ")
        }
        return text + ")"
    }
}

/// A named value of a control port (lv2:scalePoint).
public struct LV2ScalePoint: Sendable, Equatable {
    public var label: String
    public var value: Float
}

/// A property a plugin lets the host set through patch:Set messages (patch:writable), e.g. a convolver's impulse
/// response file.
public struct LV2Property: Sendable, Equatable {
    public var uri: String
    /// The name commands and graph files use: the URI's fragment or last path component.
    public var symbol: String
    public var label: String
    /// The atom type of its value (rdfs:range), e.g. atom:Path.
    public var range: String?

    public var description: String {
        "\(symbol) (property \(label), "
            + "\(range.map { $0.split(separator: "#").last.map(String.init) ?? $0 } ?? "any value")) <\(uri)>"
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
    public private(set) var ports: [LV2Port]
    public let requiredFeatures: [String]
    public let optionalFeatures: [String]
    /// Properties the host may set (patch:writable).
    public private(set) var properties: [LV2Property] = []
    /// lv2:minorVersion (0 when not given).
    public let minorVersion: Int

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
        let minorNode = lilv_new_uri(w, "http://lv2plug.in/ns/lv2core#minorVersion")
        let minor = lilv_plugin_get_value(plugin, minorNode)
        minorVersion = Int(lilvString(lilv_nodes_get_first(minor)).flatMap(Double.init) ?? 0)
        lilv_nodes_free(minor)
        lilv_node_free(minorNode)
        requiredFeatures = uris(lilv_plugin_get_required_features(plugin))
        optionalFeatures = uris(lilv_plugin_get_optional_features(plugin))
        var ports: [LV2Port] = []
        let classes = [
            LV2URI.audioPort, LV2URI.controlPort, LV2URI.cvPort, LV2URI.inputPort, LV2URI.atomPort,
            LV2URI.isSideChain, LV2URI.connectionOptional, LV2URI.reportsLatency, LV2URI.integer,
            LV2URI.portGroup, LV2URI.sideChainOf, LV2URI.minimumSize, LV2URI.sampleRate, LV2URI.toggled,
            LV2URI.enumeration, LV2URI.logarithmic, LV2URI.designation, LV2URI.midiEvent, LV2URI.timePosition,
            LV2URI.unit, LV2URI.unitSymbol,
        ].map { (text: String) -> OpaquePointer in lilv_new_uri(w, text)! }
        defer { classes.forEach { lilv_node_free($0) } }
        let (audio, control, cv, input, atom, sideChain, optional, latency, integer, group, sideChainOf, minimumSize) =
            (
                classes[0], classes[1], classes[2], classes[3], classes[4], classes[5], classes[6], classes[7],
                classes[8], classes[9], classes[10], classes[11]
            )
        let (sampleRate, toggled, enumeration, logarithmic, designation) = (
            classes[12], classes[13], classes[14], classes[15], classes[16]
        )
        let (midiEvent, timePosition, unit, unitSymbol) = (classes[17], classes[18], classes[19], classes[20])
        for i in 0..<lilv_plugin_get_num_ports(plugin) {
            guard let port = lilv_plugin_get_port_by_index(plugin, i) else { continue }
            let kind: LV2Port.Kind =
                lilv_port_is_a(plugin, port, audio)
                ? .audio
                : lilv_port_is_a(plugin, port, control)
                    ? .control
                    : lilv_port_is_a(plugin, port, cv)
                        ? .cv
                        : lilv_port_is_a(plugin, port, atom) ? .atom : .other
            var def: OpaquePointer?
            var lo: OpaquePointer?
            var hi: OpaquePointer?
            lilv_port_get_range(plugin, port, &def, &lo, &hi)
            defer {
                lilv_node_free(def)
                lilv_node_free(lo)
                lilv_node_free(hi)
            }
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
            var entry = LV2Port(
                index: Int(i), symbol: symbol, name: lilvString(nameNode) ?? symbol, kind: kind,
                isInput: lilv_port_is_a(plugin, port, input), minimum: float(lo), maximum: float(hi),
                defaultValue: float(def), isSideChain: isSideChain,
                isOptional: lilv_port_has_property(plugin, port, optional),
                isInteger: lilv_port_has_property(plugin, port, integer),
                reportsLatency: lilv_port_has_property(plugin, port, latency), minimumSize: minSize)
            entry.boundsInSampleRates = lilv_port_has_property(plugin, port, sampleRate)
            entry.isToggled = lilv_port_has_property(plugin, port, toggled)
            entry.isEnumeration = lilv_port_has_property(plugin, port, enumeration)
            entry.isLogarithmic = lilv_port_has_property(plugin, port, logarithmic)
            entry.scalePoints = Self.scalePoints(plugin, port)
            if let u = lilv_port_get(plugin, port, unit) {
                entry.unit = Self.unitSymbol(w, u, symbol: unitSymbol)
                lilv_node_free(u)
            }
            entry.supportsMIDI = kind == .atom && lilv_port_supports_event(plugin, port, midiEvent)
            entry.supportsTimePosition = kind == .atom && lilv_port_supports_event(plugin, port, timePosition)
            if let d = lilv_port_get(plugin, port, designation) {
                entry.designation = lilvString(d)
                lilv_node_free(d)
            }
            ports.append(entry)
        }
        self.ports = ports
        properties = Self.properties(w, plugin)
    }

    /// A units:unit value as people write it: the unit's own units:symbol, or for one of the LV2 units the usual
    /// symbol ("dB" for units:db).
    private static func unitSymbol(_ w: OpaquePointer, _ unit: OpaquePointer, symbol: OpaquePointer) -> String {
        if let declared = lilv_world_get(w, unit, symbol, nil) {
            defer { lilv_node_free(declared) }
            if let text = lilvString(declared) { return text }
        }
        guard let uri = lilvString(unit), uri.hasPrefix(LV2URI.units) else { return "" }
        let name = String(uri.dropFirst(LV2URI.units.count))
        let symbols = [
            "db": "dB", "hz": "Hz", "khz": "kHz", "mhz": "MHz", "s": "s", "ms": "ms", "min": "min", "pc": "%",
            "bpm": "bpm", "semitone12TET": "semitones", "cent": "cents", "oct": "octaves", "degree": "°",
            "frame": "frames", "midiNote": "note", "bar": "bars", "beat": "beats", "m": "m", "cm": "cm", "mm": "mm",
            "km": "km", "inch": "in", "mile": "mi", "coef": "",
        ]
        return symbols[name] ?? name
    }

    private static func properties(_ w: OpaquePointer, _ plugin: OpaquePointer) -> [LV2Property] {
        let writable = lilv_new_uri(w, LV2URI.writable)
        let label = lilv_new_uri(w, LV2URI.label)
        let range = lilv_new_uri(w, LV2URI.range)
        defer {
            lilv_node_free(writable)
            lilv_node_free(label)
            lilv_node_free(range)
        }
        var result: [LV2Property] = []
        let found = lilv_world_find_nodes(w, lilv_plugin_get_uri(plugin), writable, nil)
        forEachNode(found) { node in
            guard let uri = lilvString(node) else { return }
            let name = lilv_world_get(w, node, label, nil)
            let type = lilv_world_get(w, node, range, nil)
            defer {
                lilv_node_free(name)
                lilv_node_free(type)
            }
            let symbol = String(uri.split(whereSeparator: { $0 == "#" || $0 == "/" }).last ?? Substring(uri))
            result.append(
                LV2Property(uri: uri, symbol: symbol, label: lilvString(name) ?? symbol, range: lilvString(type)))
        }
        lilv_nodes_free(found)
        return result.sorted { $0.symbol < $1.symbol }
    }

    /// The atom input that takes the graph's transport (time:Position), if any.
    public var positionInput: LV2Port? { ports.first { $0.kind == .atom && $0.isInput && $0.supportsTimePosition } }

    /// The main atom input that takes MIDI events, if any: the one designated lv2:control, else the first.
    public var midiInput: LV2Port? {
        let inputs = ports.filter { $0.kind == .atom && $0.isInput && $0.supportsMIDI }
        return inputs.first { $0.designation == LV2URI.controlDesignation } ?? inputs.first
    }

    /// The atom output port that sends MIDI events, if any.
    public var midiOutput: LV2Port? { ports.first { $0.kind == .atom && !$0.isInput && $0.supportsMIDI } }

    /// An instrument: no audio input, a MIDI input; its input bus carries the events of a `midi` node.
    public var isInstrument: Bool { audioPorts(input: true).isEmpty && midiInput != nil && !isMIDIProcessor }

    /// A MIDI processor: MIDI in and out, no audio; its input and output buses carry events.
    public var isMIDIProcessor: Bool {
        audioPorts(input: true).isEmpty && audioPorts(input: false).isEmpty && midiInput != nil && midiOutput != nil
    }

    /// Sends MIDI instead of audio (a MIDI processor, a MIDI generator such as a step sequencer, an onset trigger):
    /// its output bus carries events.
    public var sendsEvents: Bool { audioPorts(input: false).isEmpty && midiOutput != nil }

    /// A source: neither audio nor MIDI input (an oscillator, a test signal, a MIDI generator); its input bus is not
    /// read.
    public var isSource: Bool { audioPorts(input: true).isEmpty && midiInput == nil }

    /// Whether the node's input bus carries events rather than audio.
    public var readsEvents: Bool { isInstrument || isMIDIProcessor }

    /// A MIDI input beside audio inputs (a MIDI gate, a synth with an audio input): events reach it on an input bus of
    /// its own, linked from a `midi` node or a plugin sending MIDI.
    public var eventInputBesideAudio: LV2Port? { readsEvents || audioPorts(input: true).isEmpty ? nil : midiInput }

    /// The atom input port that takes patch messages (lv2:designation lv2:control, else the first atom input).
    public var controlAtomInput: LV2Port? {
        let inputs = ports.filter { $0.kind == .atom && $0.isInput }
        return inputs.first { $0.designation == LV2URI.controlDesignation } ?? inputs.first
    }

    /// A port's scale points, by value.
    private static func scalePoints(_ plugin: OpaquePointer, _ port: OpaquePointer) -> [LV2ScalePoint] {
        guard let points = lilv_port_get_scale_points(plugin, port) else { return [] }
        defer { lilv_scale_points_free(points) }
        var result: [LV2ScalePoint] = []
        var i = lilv_scale_points_begin(points)
        while !lilv_scale_points_is_end(points, i) {
            if let point = lilv_scale_points_get(points, i), let label = lilvString(lilv_scale_point_get_label(point)) {
                result.append(
                    LV2ScalePoint(label: label, value: Float(lilv_node_as_float(lilv_scale_point_get_value(point)))))
            }
            i = lilv_scale_points_next(points, i)
        }
        return result.sorted { $0.value < $1.value }
    }

    /// The plugin at a sample rate: lv2:sampleRate bounds and defaults in Hz.
    public func at(sampleRate: Int) -> LV2PluginInfo {
        var plugin = self
        plugin.ports = ports.map { $0.at(sampleRate: sampleRate) }
        return plugin
    }

    /// Whether the plugin declares lv2:hardRTCapable: its run() neither blocks nor allocates.
    public var isHardRTCapable: Bool { (requiredFeatures + optionalFeatures).contains(LV2URI.hardRTCapable) }

    /// Required features graphhost does not provide.
    public var unsupportedFeatures: [String] { requiredFeatures.filter { !LV2URI.supportedFeatures.contains($0) } }

    /// Audio and CV ports, the ones links name (`"from": "NODE:PORT"`, `"to": "NODE:PORT"`).
    public var signalPorts: [LV2Port] { ports.filter { $0.kind == .audio || $0.kind == .cv } }
    public func audioPorts(input: Bool) -> [LV2Port] {
        ports.filter { $0.carriesAudio && $0.isInput == input && !$0.isSideChain }
    }
    /// Input control ports a user sets (those the host sets, such as lv2:freeWheeling, left out).
    public var controlInputs: [LV2Port] {
        ports.filter { $0.kind == .control && $0.isInput && $0.designation != LV2URI.freeWheeling }
    }
    public var latencyPort: LV2Port? { ports.first { $0.kind == .control && !$0.isInput && $0.reportsLatency } }

    /// The plugin's presets (loading their resources on first use).
    public var presets: [LV2Preset] {
        let result = LV2World.shared.withPlugin(uri) { w, plugin in
            let presetClass = lilv_new_uri(w, LV2URI.preset)
            let labelNode = lilv_new_uri(w, LV2URI.label)
            defer {
                lilv_node_free(presetClass)
                lilv_node_free(labelNode)
            }
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

    /// Whether file properties (atom:Path) must be given through state restore rather than patch:Set. x42 zeroconvolv
    /// up to version 0.1548 (Debian 12's x42-plugins 20221119) takes a patch:Set for its IR but its worker drops the
    /// path (fixed upstream in 2023); restoring the same key loads the file.
    var takesPathsThroughState: Bool {
        uri.hasPrefix("http://gareus.org/oss/lv2/zeroconvolv#") && minorVersion <= 1548
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
        struct Context {
            var box: Unmanaged<Box>
            var types: (UInt32, UInt32, UInt32, UInt32, UInt32)
        }
        var context = Context(box: .passUnretained(box), types: (floatType, intType, doubleType, longType, boolType))
        withUnsafeMutablePointer(to: &context) { ctx in
            lilv_state_emit_port_values(
                state,
                { symbol, user, value, size, type in
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
