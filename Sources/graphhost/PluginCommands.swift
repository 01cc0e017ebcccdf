import ArgumentParser
import FoundationEssentials
import Glibc
import GraphHost

struct PluginsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "plugins", abstract: "List installed LV2 plugins (LV2_PATH and the repository's Plugins/).")
    @Flag(help: "Print JSON.") var json = false
    @Argument(help: "Only plugins whose URI or name contains this (case-insensitive).") var filter: String?

    func run() throws {
        let plugins = LV2World.shared.plugins.filter { p in
            filter.map { f in p.uri.lowercased().contains(f.lowercased()) || p.name.lowercased().contains(f.lowercased()) } ?? true
        }
        if json {
            let list: [[String: Any]] = plugins.map { p in
                [
                    "uri": p.uri, "name": p.name,
                    "audioInputs": p.audioPorts(input: true).count, "audioOutputs": p.audioPorts(input: false).count, "instrument": p.isInstrument, "midiProcessor": p.isMIDIProcessor,
                    "source": p.isSource, "sendsEvents": p.sendsEvents, "traits": p.descriptor.traits.names,
                    "signalPorts": p.signalPorts.map { ["index": $0.index, "symbol": $0.symbol, "kind": $0.kind.rawValue, "input": $0.isInput, "sidechain": $0.isSideChain] },
                    "controls": p.controlInputs.map { c -> [String: Any] in
                        var d: [String: Any] = ["symbol": c.symbol, "name": c.name]
                        if let v = c.minimum { d["minimum"] = v }
                        if let v = c.maximum { d["maximum"] = v }
                        if let v = c.defaultValue { d["default"] = v }
                        if c.boundsInSampleRates { d["boundsInSampleRates"] = true }
                        let properties = [(c.isToggled, "toggled"), (c.isInteger, "integer"), (c.isEnumeration, "enumeration"),
                                          (c.isLogarithmic, "logarithmic")].filter(\.0).map(\.1)
                        if !properties.isEmpty { d["properties"] = properties }
                        if !c.scalePoints.isEmpty { d["scalePoints"] = c.scalePoints.map { ["label": $0.label, "value": $0.value] } }
                        return d
                    },
                    "requiredFeatures": p.requiredFeatures.map { ["uri": $0, "supported": !p.unsupportedFeatures.contains($0)] },
                    "presets": p.presets.count, "hardRTCapable": p.isHardRTCapable,
                    "properties": p.properties.map { ["symbol": $0.symbol, "uri": $0.uri, "label": $0.label, "range": $0.range ?? ""] },
                ]
            }
            print(JSONText.indented(list))
            return
        }
        for p in plugins {
            print("\(p.uri)\n  name: \(p.name)\n  audio: \(p.audioPorts(input: true).count) in, \(p.audioPorts(input: false).count) out")
            for port in p.signalPorts { print("  port \(port.description)") }
            for c in p.controlInputs { print("  control \(c.description)") }
            for property in p.properties { print("  property \(property.description)") }
            for f in p.requiredFeatures { print("  requires \(f)\(p.unsupportedFeatures.contains(f) ? " (not supported)" : "")") }
            if !p.isHardRTCapable { print("  not lv2:hardRTCapable: run() may block or allocate (live playback may drop out)") }
            print("  presets: \(p.presets.count)")
            print("  traits: \(p.descriptor.traits.names.joined(separator: ", "))")
        }
        if plugins.isEmpty { print("no LV2 plugins found in \(LV2World.shared.searchPath)") }
    }
}

struct PresetsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "presets", abstract: "List an LV2 plugin's presets.")
    @Argument(help: "The plugin URI.") var uri: String

    func run() throws {
        guard let plugin = LV2World.shared.plugin(uri) else {
            printError("error: no LV2 plugin '\(uri)' in \(LV2World.shared.searchPath)")
            throw ExitCode(2)
        }
        for preset in plugin.presets { print("\(preset.label)\t\(preset.uri)") }
    }
}
