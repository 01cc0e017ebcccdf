import FoundationEssentials

/// `ladspa`: a LADSPA plugin, named by its library and label or by its unique id (`uniqueID`). Its ports are read
/// from their hints (bounds, logarithmic, toggled, integer, sample rate, default) as parameters. Its audio ports map
/// onto the bus as an `lv2` node's do: as many inputs and outputs as the bus has channels are wired straight, a mono
/// plugin runs once per channel, a single input on a wider bus reads the channels' average and a single output goes to
/// every channel; ports beyond the bus's channels read silence. A plugin without audio outputs (an analyser, a
/// control-rate plugin) passes its input on, and its control outputs show in `status`. `controls` set input control
/// ports by symbol (the port's name in lower case, words joined by "_", as `plugins --ladspa` shows).
public struct LADSPANode: NodeDefinition, ControlPortNode {
    public static let typeName = "ladspa"

    static let pluginSetting = SettingDescriptor(
        "plugin", .string, pattern: "^.+$",
        doc: "The plugin's library: a path, or a file name in LADSPA_PATH (see `graphhost plugins --ladspa`).")
    static let labelSetting = SettingDescriptor(
        "label", .string, pattern: "^.+$", doc: "The plugin's label in its library (needed with `plugin`).")
    static let idSetting = SettingDescriptor(
        "uniqueID", .integer, range: 1...16_777_215, doc: "The plugin's unique id, in place of `plugin` and `label`.")
    static let controlsSetting = SettingDescriptor(
        "controls", .object(members: ["number", "string", "boolean"]),
        doc:
            "Input control port values by symbol: a number (fitted to the port's range, with a warning), or "
            + "true/false (or on/off) for a toggle.")
    static let bypassSetting = SettingDescriptor("bypass", .boolean, default: .bool(false), doc: "Starts bypassed.")

    public static let descriptor = NodeDescriptor(
        typeName: typeName,
        summary: "A LADSPA plugin; its ports and controls come from the plugin's port hints.",
        ports: [PortDescriptor(.audio, .input, name: "in"), PortDescriptor(.audio, .output, name: "out")],
        traits: [.canBypass],
        settings: [pluginSetting, labelSetting, idSetting, controlsSetting, bypassSetting, PluginIsolation.setting])

    public var descriptor: NodeDescriptor { plugin.descriptor }

    public var plugin: LADSPAPlugin
    /// Values of the input control ports, by port index (defaults, then `controls`).
    public var controlValues: [Int: Float]
    public var bypass = false
    /// Runs the plugin in a helper process (`"isolate": true`).
    public var isolate = false
    /// 1 when the plugin's audio ports match the bus, else the channel count (a mono plugin per channel).
    public var copies: Int
    /// The audio ports the bus feeds and takes, by port index, in channel order.
    public var mainInputs: [Int]
    public var mainOutputs: [Int]

    public var inputBuses: Int { 1 }
    public var outputBuses: Int { 1 }
    /// How the node names its plugin in messages.
    var name: String { "\(plugin.label) (\(plugin.uniqueID)) in \(plugin.library)" }

    public var summary: [(String, String)] {
        [
            ("library", plugin.library), ("label", plugin.label), ("id", "\(plugin.uniqueID)"),
            ("instances", "\(copies)"),
        ]
            + plugin.controlInputs.map { ($0.symbol, Format.number(controlValues[$0.index] ?? 0)) }
    }

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> LADSPANode? {
        let libraries = LADSPALibraries.shared
        let library = settings.string(pluginSetting, issues: &issues)
        let label = settings.string(labelSetting, issues: &issues)
        let id = settings.number(idSetting, issues: &issues).map { Int($0) }
        let found: LADSPAPlugin
        if let id, library == nil, label == nil {
            guard let plugin = libraries.plugin(id: id) else {
                issues.report(
                    settings.path("uniqueID"), "no LADSPA plugin with unique id \(id) in \(libraries.searchPath)",
                    at: settings.object["uniqueID"])
                return nil
            }
            found = plugin
        } else if let library, let label, id == nil {
            guard let path = libraries.path(of: library) else {
                issues.report(
                    settings.path("plugin"), "no LADSPA library '\(library)' in \(libraries.searchPath)",
                    at: settings.object["plugin"])
                return nil
            }
            switch libraries.plugins(inLibrary: path) {
            case .failure(let error):
                issues.report(settings.path("plugin"), error.description, at: settings.object["plugin"])
                return nil
            case .success(let plugins):
                guard let plugin = plugins.first(where: { $0.label == label }) else {
                    issues.report(
                        settings.path("label"),
                        "no plugin labelled '\(label)' in \(path); labels: "
                            + plugins.map(\.label).joined(separator: ", "),
                        at: settings.object["label"])
                    return nil
                }
                found = plugin
            }
        } else {
            issues.report(
                settings.path,
                "a ladspa node names its plugin by \"plugin\" (its library) and \"label\", or by \"uniqueID\" alone",
                at: settings.object)
            return nil
        }
        let plugin = found.at(sampleRate: context.format.sampleRate)
        let channels = context.format.channels
        let ins = plugin.audioPorts(input: true)
        let outs = plugin.audioPorts(input: false)
        guard let wiring = LV2Port.wiring(inputs: ins, outputs: outs, channels: channels) else {
            issues.report(
                settings.path,
                "LADSPA plugin \(plugin.label) (\(plugin.uniqueID)) has \(ins.count) audio inputs and \(outs.count) "
                    + "outputs; a \(channels)-channel bus takes none, 1 or at least \(channels) inputs and none, 1 or "
                    + "at least \(channels) outputs",
                at: settings.object)
            return nil
        }
        var values: [Int: Float] = [:]
        for port in plugin.controlInputs { values[port.index] = port.conform(port.defaultValue ?? port.minimum ?? 0) }
        guard LV2Port.parseControls(settings, ports: plugin.controlInputs, into: &values, issues: &issues) else {
            return nil
        }
        var node = LADSPANode(
            plugin: plugin, controlValues: values, copies: wiring.copies, mainInputs: wiring.inputs,
            mainOutputs: wiring.outputs)
        node.bypass = settings.bool(bypassSetting, issues: &issues) ?? false
        node.isolate = settings.bool(PluginIsolation.setting, issues: &issues) ?? false
        return node
    }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance {
        guard PluginIsolation.applies(isolate) else { return try LADSPAInstance(id: id, node: self, format: format) }
        let identity: [(key: String, value: JSONValue)] = [
            ("type", .string(Self.typeName)), ("plugin", .string(plugin.library)), ("label", .string(plugin.label)),
        ]
        return try IsolatedPluginInstance(
            id: id, definition: self, settings: .object(identity), pluginName: name, format: format,
            dryIsSilence: mainInputs.isEmpty)
    }

    /// The same plugin keeps its instance; changed controls and bypass apply live.
    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? {
        guard let old = old as? LADSPANode, old.plugin.library == plugin.library,
            old.plugin.uniqueID == plugin.uniqueID, old.copies == copies
        else { return nil }
        var commands: [NodeCommand] = plugin.controlInputs.compactMap { port in
            guard let value = controlValues[port.index], value != old.controlValues[port.index] else { return nil }
            return .set(parameter: ParameterID(port.symbol), value: Double(value))
        }
        if bypass != old.bypass { commands.append(.bypass(bypass)) }
        return commands
    }

    /// The input control ports, for `ControlPortNode`.
    public var controlInputs: [LV2Port] { plugin.controlInputs }

    public func applying(_ command: NodeCommand) -> any NodeDefinition {
        var next = self
        switch command {
        case .bypass(let on):
            next.bypass = on
        case .set(let parameter, let value):
            if let port = plugin.controlInputs.first(where: { $0.symbol == parameter.description }) {
                next.controlValues[port.index] = port.conform(Float(value))
            }
        case .choose(let parameter, let label):
            if let port = plugin.controlInputs.first(where: { $0.symbol == parameter.description }),
                let value = port.value(named: label)
            {
                next.controlValues[port.index] = value
            }
        case .preset, .seek:
            break
        }
        return next
    }

    /// How the plugin is named (as the graph named it), the controls that differ from their defaults, bypass.
    public var liveSettings: [(key: String, value: JSONValue?)] {
        let controls = plugin.controlInputs.filter {
            controlValues[$0.index] != $0.conform($0.defaultValue ?? $0.minimum ?? 0) && controlValues[$0.index] != nil
        }
        .map { (key: $0.symbol, value: JSONValue.number(Double(Format.number(controlValues[$0.index]!)) ?? 0)) }
        return [("controls", controls.isEmpty ? nil : .object(controls)), ("bypass", bypass ? .bool(true) : nil)]
    }
}
