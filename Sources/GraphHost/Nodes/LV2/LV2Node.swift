import CLV2
import CLilv
import FoundationEssentials
import Glibc
import Logging

/// `lv2`: an LV2 plugin loaded through lilv. Its main audio ports map onto the bus: as many inputs and outputs as
/// the bus has channels are wired straight (port order = channel order); a mono plugin runs once per channel; a
/// single input on a wider bus reads the channels' average, and a single output is copied to every channel. On a
/// plugin with more ports than the bus has channels, the first ones are the main ports and the others are linked by
/// name (`"from": "xover:lo_l,lo_r"`, `"to": "comp:sc"`); sidechains and unlinked inputs read silence. A plugin with
/// audio inputs and a MIDI input (a MIDI gate) takes events on an input bus of its own: a link from a `midi` node goes
/// to its main MIDI input, or to the one it names (`"to": "gate:control"`).
/// `controls` set input control ports by symbol; `preset` picks a preset by label or URI.
public struct LV2Node: NodeDefinition, ControlPortNode {
    public static let typeName = "lv2"

    static let uriSetting = SettingDescriptor(
        "uri", .string, required: true, pattern: "^.+$",
        doc: "An LV2 plugin URI (see `graphhost plugins`).")
    static let controlsSetting = SettingDescriptor(
        "controls", .object(members: ["number", "string", "boolean"]),
        doc:
            "Input control port values by symbol: a number (fitted to the port, with a warning: its range, "
            + "whole for lv2:integer, the nearest scale point for lv2:enumeration; lv2:sampleRate "
            + "ports in Hz), a scale point's label (any case), or true/false (or on/off) for a toggle."
    )
    static let presetSetting = SettingDescriptor(
        "preset", .string, doc: "A preset label (case-insensitive) or URI (see `graphhost presets URI`).")
    static let propertiesSetting = SettingDescriptor(
        "properties", .object(members: ["string", "number", "boolean"]),
        doc:
            "Values of the plugin's properties (patch:writable, see `graphhost plugins`) by "
            + "name, sent as patch:Set before the first slice and live with `set NODE "
            + "NAME VALUE`; a path is relative to the graph file and must be readable."
    )
    static let bypassSetting = SettingDescriptor("bypass", .boolean, default: .bool(false), doc: "Starts bypassed.")

    public static let descriptor = NodeDescriptor(
        typeName: typeName,
        summary: "An LV2 plugin loaded through lilv; its ports, controls and presets come from the plugin.",
        ports: [PortDescriptor(.audio, .input, name: "in"), PortDescriptor(.audio, .output, name: "out")],
        traits: [.canBypass],
        settings: [
            uriSetting, controlsSetting, presetSetting, propertiesSetting, bypassSetting, PluginIsolation.setting,
        ])

    /// The plugin's descriptor, read from lilv when the node is read.
    public var descriptor: NodeDescriptor = LV2Node.descriptor

    public var uri: String
    public var plugin: LV2PluginInfo
    /// Initial values of the input control ports, by port index (defaults, then preset, then `controls`).
    public var controlValues: [Int: Float]
    public var presetLabel: String?
    /// The preset's URI; its state (beyond port values) is restored before activation.
    public var presetURI: String?
    /// Values of the plugin's properties (patch:writable) as text, by property symbol; set before the first slice.
    public var propertyValues: [String: String] = [:]
    /// Starts bypassed (`"bypass": true`).
    public var bypass = false
    /// Runs the plugin in a helper process (`"isolate": true`).
    public var isolate = false
    /// 1 when the plugin's audio ports match the bus, else the channel count (a mono plugin per channel).
    public var copies: Int

    /// Input ports fed by links of their own (`"to": "NODE:PORT"`), each on input bus 1, 2, …: the source bus's
    /// `channel`, or the average of its channels; or, for the MIDI input of a plugin with audio inputs, the events of
    /// a `midi` node or a plugin sending MIDI (`carriesEvents`).
    public struct PortInput: Sendable, Equatable, Codable {
        public var port: Int
        public var symbol: String
        public var channel: Int?
        public var carriesEvents = false
    }
    public var portInputs: [PortInput] = []
    /// Output buses 1, 2, … made of output ports linked by name (`"from": "NODE:PORT,PORT"`): channel i is the i-th
    /// port, and a single port fills every channel.
    public struct PortOutput: Sendable, Equatable, Codable {
        public var ports: [Int]
        public var symbols: [String]
    }
    public var portOutputs: [PortOutput] = []
    /// The audio ports the node's main input and output buses feed and take, by port index, in channel order (per
    /// instance for a mono plugin run once per channel).
    public var mainInputs: [Int] = []
    public var mainOutputs: [Int] = []

    public var inputBuses: Int { 1 + portInputs.count }
    /// Whether input bus `bus` carries events (switched on a swap, never crossfaded) rather than audio.
    public func carriesEvents(bus: Int) -> Bool { bus == 0 ? plugin.readsEvents : portInputs[bus - 1].carriesEvents }
    public var mainEventInput: String? { plugin.eventInputBesideAudio?.symbol }
    public var outputBuses: Int { 1 + portOutputs.count }
    public var summary: [(String, String)] {
        var items = [("uri", uri), ("instances", "\(copies)")]
        if let presetLabel { items.append(("preset", presetLabel)) }
        for port in plugin.controlInputs { items.append((port.symbol, Format.number(controlValues[port.index] ?? 0))) }
        for property in plugin.properties {
            items.append((property.symbol, propertyValues[property.symbol] ?? "(not set)"))
        }
        if let latency = plugin.latencyPort {
            items.append(("latency", "reported by port '\(latency.symbol)'; parallel paths are aligned at mixers"))
        }
        return items
    }

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> LV2Node? {
        guard let uri = settings.string(uriSetting, issues: &issues) else {
            if settings.object["uri"] == nil {
                issues.report(
                    settings.path, "missing \"uri\" (an LV2 plugin URI; see `graphhost plugins`)", at: settings.object)
            }
            return nil
        }
        let world = LV2World.shared
        guard let plugin = world.plugin(uri)?.at(sampleRate: context.format.sampleRate) else {
            issues.report(
                settings.path("uri"), "no LV2 plugin '\(uri)' in \(world.searchPath) (see `graphhost plugins`)",
                at: settings.object["uri"])
            return nil
        }
        if let port = plugin.ports.first(where: { $0.kind == .other && !$0.isOptional }) {
            issues.report(
                settings.path("uri"),
                "plugin '\(uri)' has port \(port.index) '\(port.symbol)' of a type graphhost does not "
                    + "support (neither audio, CV, control nor atom), and the plugin needs it connected",
                at: settings.object["uri"])
            return nil
        }
        if let feature = plugin.unsupportedFeatures.first {
            issues.report(
                settings.path("uri"),
                "plugin '\(uri)' requires the feature \(feature), which graphhost does not provide",
                at: settings.object["uri"])
            return nil
        }
        if !plugin.isHardRTCapable {
            issues.warn(
                settings.path("uri"),
                "plugin '\(uri)' does not declare lv2:hardRTCapable: its run() "
                    + "may block or allocate, so live playback may drop out",
                at: settings.object["uri"])
        }
        let channels = context.format.channels
        let ins = plugin.audioPorts(input: true)
        let outs = plugin.audioPorts(input: false)
        guard let wiring = LV2Port.wiring(inputs: ins, outputs: outs, channels: channels) else {
            let ports = plugin.ports.map(\.description).joined(separator: "; ")
            issues.report(
                settings.path("uri"),
                "plugin '\(uri)' has \(ins.count) audio inputs and \(outs.count) outputs; a "
                    + "\(channels)-channel bus takes none, 1 or at least \(channels) inputs "
                    + "and none, 1 or at least \(channels) outputs. Its ports: \(ports)",
                at: settings.object["uri"])
            return nil
        }
        var values: [Int: Float] = [:]
        for port in plugin.controlInputs { values[port.index] = port.conform(port.defaultValue ?? port.minimum ?? 0) }
        var presetLabel: String?
        var presetURI: String?
        if let name = settings.string(presetSetting, issues: &issues) {
            guard let preset = plugin.preset(name) else {
                let list = plugin.presets.map(\.label)
                issues.report(
                    settings.path("preset"),
                    "unknown preset '\(name)' for \(uri); presets: "
                        + "\(list.isEmpty ? "none" : list.joined(separator: ", "))",
                    at: settings.object["preset"])
                return nil
            }
            presetLabel = preset.label
            presetURI = preset.uri
            for (symbol, value) in plugin.portValues(of: preset) {
                if let port = plugin.controlInputs.first(where: { $0.symbol == symbol }) { values[port.index] = value }
            }
        }
        guard LV2Port.parseControls(settings, ports: plugin.controlInputs, into: &values, issues: &issues) else {
            return nil
        }
        guard let properties = parseProperties(settings, plugin: plugin, context: context, issues: &issues) else {
            return nil
        }
        var node = LV2Node(
            uri: uri, plugin: plugin, controlValues: values, presetLabel: presetLabel, presetURI: presetURI,
            copies: wiring.copies)
        node.propertyValues = properties
        node.bypass = settings.bool(bypassSetting, issues: &issues) ?? false
        node.isolate = settings.bool(PluginIsolation.setting, issues: &issues) ?? false
        node.descriptor = plugin.descriptor
        node.mainInputs = wiring.inputs
        node.mainOutputs = wiring.outputs
        return node
    }

    /// The `properties` setting: each value as text (a path resolved against the graph's folder), checked by building
    /// its patch:Set message; nil when the setting is not an object.
    static func parseProperties(
        _ settings: NodeSettings, plugin: LV2PluginInfo, context: NodeContext,
        issues: inout GraphIssues
    ) -> [String: String]? {
        var properties: [String: String] = [:]
        guard let members = settings.members("properties", shape: "PROPERTY: value", issues: &issues) else {
            return nil
        }
        for (path, symbol, value) in members {
            guard let property = plugin.properties.first(where: { $0.symbol == symbol }) else {
                let known = plugin.properties.map(\.symbol)
                issues.report(
                    path,
                    "unknown property '\(symbol)'; properties: "
                        + "\(known.isEmpty ? "none" : known.joined(separator: ", "))",
                    at: value)
                continue
            }
            guard let text = propertyText(value) else {
                issues.report(path, "expected a string, number or boolean, found \(value.typeName)", at: value)
                continue
            }
            // Relative paths are relative to the graph file.
            let isRelativePath = property.range == LV2URI.atomPath && !text.hasPrefix("/") && !text.hasPrefix("~")
            var resolved = isRelativePath ? context.baseDirectory.appendingPathComponent(text).path : text
            if property.range == LV2URI.atomPath {
                do { resolved = try context.files.confine(resolved, given: text) } catch {
                    issues.report(path, error.description, at: value)
                    continue
                }
            }
            if let problem = PatchMessage.problem(property, text: resolved) {
                issues.report(path, problem, at: value)
            } else {
                properties[symbol] = resolved
            }
        }
        return properties
    }

    /// A property value from JSON as text.
    static func propertyText(_ value: JSONValue) -> String? {
        if let text = value.stringValue { return text }
        if let number = value.numberValue { return Format.number(number) }
        if let flag = value.boolValue { return flag ? "on" : "off" }
        return nil
    }

    /// This node with a file property set by `command` (`set NODE PROPERTY PATH`), or nil when the command sets no file
    /// property. Throws when the file cannot be used.
    public func settingFile(_ command: NodeCommand, files: FileAccess) throws -> (any NodeDefinition)? {
        guard let (symbol, given) = LV2Instance.text(of: command),
            !plugin.controlInputs.contains(where: { $0.symbol == symbol }),
            let property = plugin.properties.first(where: { $0.symbol == symbol }), property.range == LV2URI.atomPath
        else { return nil }
        let text = files.roots == nil ? given : try files.commandPath(given)
        if let problem = PatchMessage.problem(property, text: text) {
            throw NodeCommandError.invalidValue("\(symbol): \(problem)")
        }
        var node = self
        node.propertyValues[symbol] = text
        return node
    }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance {
        guard PluginIsolation.applies(isolate) else { return try LV2Instance(id: id, node: self, format: format) }
        return try IsolatedPluginInstance(
            id: id, definition: self, settings: .object([("type", .string(Self.typeName)), ("uri", .string(uri))]),
            pluginName: uri, format: format, dryIsSilence: mainInputs.isEmpty, sendsEvents: plugin.sendsEvents,
            links: portInputs.isEmpty && portOutputs.isEmpty ? "" : LV2PortLinks(self).json)
    }

    /// The same plugin keeps its instance (and its state); a changed preset, changed controls and changed properties
    /// other than files apply live. A changed file (an impulse response, a sample) makes a new instance that loads it
    /// before it is heard, and the swap crossfades to it.
    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? {
        guard let old = old as? LV2Node, old.uri == uri, old.copies == copies, old.portInputs == portInputs,
            old.portOutputs == portOutputs,
            !plugin.properties.contains(where: {
                $0.range == LV2URI.atomPath && old.propertyValues[$0.symbol] != propertyValues[$0.symbol]
            })
        else { return nil }
        var commands: [NodeCommand] = []
        if let presetURI, presetURI != old.presetURI { commands.append(.preset(presetURI)) }
        for port in plugin.controlInputs where controlValues[port.index] != old.controlValues[port.index] {
            if let value = controlValues[port.index] {
                commands.append(.set(parameter: ParameterID(port.symbol), value: Double(value)))
            }
        }
        for (symbol, text) in propertyValues.sorted(by: { $0.key < $1.key }) where old.propertyValues[symbol] != text {
            commands.append(.choose(parameter: ParameterID(symbol), label: text))
        }
        if bypass != old.bypass { commands.append(.bypass(bypass)) }
        return commands
    }

    /// The input control ports, for `ControlPortNode`.
    public var controlInputs: [LV2Port] { plugin.controlInputs }

    public var presetName: String? { presetLabel }

    public func hasPreset(_ name: String) -> Bool { plugin.preset(name) != nil }

    public func applying(_ command: NodeCommand) -> any NodeDefinition {
        var next = self
        switch command {
        case .bypass(let on):
            next.bypass = on
        case .preset(let name):
            guard let preset = plugin.preset(name) else { break }
            next.presetLabel = preset.label
            next.presetURI = preset.uri
            for (symbol, value) in plugin.portValues(of: preset) {
                if let port = plugin.controlInputs.first(where: { $0.symbol == symbol }) {
                    next.controlValues[port.index] = port.conform(value)
                }
            }
        case .set(let parameter, let value):
            let symbol = parameter.description
            if let port = plugin.controlInputs.first(where: { $0.symbol == symbol }) {
                next.controlValues[port.index] = port.conform(Float(value))
            } else if plugin.properties.contains(where: { $0.symbol == symbol }) {
                next.propertyValues[symbol] = Format.number(value)
            }
        case .choose(let parameter, let label):
            let symbol = parameter.description
            if let port = plugin.controlInputs.first(where: { $0.symbol == symbol }) {
                if let value = port.value(named: label) { next.controlValues[port.index] = value }
            } else if plugin.properties.contains(where: { $0.symbol == symbol }) {
                next.propertyValues[symbol] = label
            }
        case .seek:
            break
        }
        return next
    }

    /// The preset, every control that differs from what the defaults and the preset give, the properties, bypass.
    public var liveSettings: [(key: String, value: JSONValue?)] {
        var base: [Int: Float] = [:]
        for port in plugin.controlInputs { base[port.index] = port.conform(port.defaultValue ?? port.minimum ?? 0) }
        if let preset = presetURI.flatMap({ plugin.preset($0) }) {
            for (symbol, value) in plugin.portValues(of: preset) {
                if let port = plugin.controlInputs.first(where: { $0.symbol == symbol }) { base[port.index] = value }
            }
        }
        let controls = plugin.controlInputs.filter {
            controlValues[$0.index] != base[$0.index] && controlValues[$0.index] != nil
        }
        .map { (key: $0.symbol, value: JSONValue.number(Double(Format.number(controlValues[$0.index]!)) ?? 0)) }
        let properties = propertyValues.sorted { $0.key < $1.key }.map {
            (key: $0.key, value: JSONValue.string($0.value))
        }
        return [
            ("preset", presetLabel.map { .string($0) }), ("controls", controls.isEmpty ? nil : .object(controls)),
            ("properties", properties.isEmpty ? nil : .object(properties)), ("bypass", bypass ? .bool(true) : nil),
        ]
    }
}

/// A plugin node whose parameters are its input control ports (`lv2`, `ladspa`): their values as it plays, and a
/// bypass given before it renders.
protocol ControlPortNode: NodeDefinition {
    var controlInputs: [LV2Port] { get }
    /// Values of the input control ports, by port index.
    var controlValues: [Int: Float] { get }
    var bypass: Bool { get }
}

extension ControlPortNode {
    public var initialCommands: [NodeCommand] { bypass ? [.bypass(true)] : [] }

    public func value(of parameter: ParameterID) -> Double? {
        controlInputs.first { $0.symbol == parameter.description }.flatMap { controlValues[$0.index] }.map {
            Double($0)
        }
    }
}

extension LV2Port {
    /// Reads a node's `controls` setting (values by port symbol: a number, a value's name, or true/false for a toggle)
    /// into `values` by port index; false when it is not an object. Unknown symbols and names are reported, numbers
    /// outside a port's range fitted with a warning.
    static func parseControls(
        _ settings: NodeSettings, ports: [LV2Port], into values: inout [Int: Float], issues: inout GraphIssues
    ) -> Bool {
        guard let controls = settings.members("controls", shape: "SYMBOL: number", issues: &issues) else {
            return false
        }
        for (path, symbol, value) in controls {
            guard let port = ports.first(where: { $0.symbol == symbol }) else {
                issues.report(
                    path,
                    "unknown control '\(symbol)'; controls: "
                        + "\(ports.map(\.symbol).joined(separator: ", "))",
                    at: value)
                continue
            }
            if let flag = value.boolValue, port.isToggled {
                values[port.index] = flag ? (port.maximum ?? 1) : (port.minimum ?? 0)
                continue
            }
            if let name = value.stringValue {
                guard let named = port.value(named: name) else {
                    let names = port.valueNames
                    issues.report(
                        path,
                        "no value named '\(name)'; "
                            + (names.isEmpty
                                ? "expected a number, \(port.rangeText)" : "names: \(names.joined(separator: ", "))"),
                        at: value)
                    continue
                }
                values[port.index] = named
                continue
            }
            guard let number = value.numberValue else {
                issues.report(path, "expected a number or a value's name, found \(value.typeName)", at: value)
                continue
            }
            let fitted = port.conform(Float(number))
            if fitted != Float(number) {
                issues.warn(
                    path, "\(Format.number(number)) is not \(port.rangeText); using \(Format.number(fitted))", at: value
                )
            }
            values[port.index] = fitted
        }
        return true
    }

    /// How audio ports map onto a bus of `channels`: one copy whose first ports per channel are wired straight (mono
    /// to stereo: a mono input reads the channels' average; stereo to mono: the output goes to every channel; more
    /// ports than channels: the rest by name; none: an instrument or source, or an analyser whose input passes on), or
    /// a mono plugin run once per channel. Nil when the counts fit neither (2 ports on a 4-channel bus).
    static func wiring(inputs: [LV2Port], outputs: [LV2Port], channels: Int) -> (
        copies: Int, inputs: [Int], outputs: [Int]
    )? {
        /// One port, or at least one per channel (the first ones are the main ports).
        func main(_ ports: [LV2Port]) -> [Int]? {
            ports.count <= 1 || ports.count >= channels ? ports.prefix(channels).map(\.index) : nil
        }
        guard let ins = main(inputs), let outs = main(outputs) else { return nil }
        return (inputs.count == 1 && outputs.count == 1 && channels > 1 ? channels : 1, ins, outs)
    }

    /// The value of a scale point or toggle name, for `choose`; throws naming what it takes.
    func value(named label: String, node: String, parameter: ParameterID) throws -> Float {
        guard let value = value(named: label) else {
            throw NodeCommandError.unknownLabel(
                node: node, parameter: parameter, label: label,
                known: valueNames.isEmpty
                    ? "it takes a number, \(rangeText)" : "names: \(valueNames.joined(separator: ", "))")
        }
        return value
    }

    /// The value the port accepts nearest to `value`: within its range, 0 or 1 for a toggle, a whole number for
    /// lv2:integer, a scale point for lv2:enumeration.
    public func conform(_ value: Float) -> Float {
        if isToggled { return value > 0 ? (maximum ?? 1) : (minimum ?? 0) }
        if isEnumeration, let nearest = scalePoints.min(by: { abs($0.value - value) < abs($1.value - value) }) {
            return nearest.value
        }
        var v = value
        if let lo = minimum { v = max(v, lo) }
        if let hi = maximum { v = min(v, hi) }
        return isInteger ? v.rounded() : v
    }

    /// What the port accepts, in words.
    var rangeText: String {
        if isToggled { return "on or off" }
        if isEnumeration && !scalePoints.isEmpty {
            return "one of " + scalePoints.map { "\($0.label) (\(Format.number($0.value)))" }.joined(separator: ", ")
        }
        let range = "\(minimum.map { Format.number($0) } ?? "-∞")…\(maximum.map { Format.number($0) } ?? "∞")"
        return isInteger ? "the whole numbers \(range)" : range
    }

    /// The value a name stands for: a scale point's label (any case), or on/off, true/false, yes/no for a toggle.
    func value(named name: String) -> Float? {
        if let point = scalePoints.first(where: { $0.label.lowercased() == name.lowercased() }) { return point.value }
        guard isToggled else { return nil }
        switch name.lowercased() {
        case "on", "true", "yes": return maximum ?? 1
        case "off", "false", "no": return minimum ?? 0
        default: return nil
        }
    }

    /// The names `value(named:)` knows, for error messages and completion.
    var valueNames: [String] { scalePoints.map(\.label) + (isToggled ? ["on", "off"] : []) }
}
