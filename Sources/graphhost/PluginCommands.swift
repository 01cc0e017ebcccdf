import ArgumentParser
import FoundationEssentials
import Glibc
import GraphHost

struct PluginsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins",
        abstract: "List installed LV2 plugins (LV2_PATH and the repository's Plugins/), or LADSPA plugins.")
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "List LADSPA plugins (LADSPA_PATH, or Debian's folders) instead.") var ladspa = false
    @Argument(help: "Only plugins whose URI (label for LADSPA) or name contains this (case-insensitive).")
    var filter: String?

    func matches(_ texts: String...) -> Bool {
        filter.map { f in texts.contains { $0.lowercased().contains(f.lowercased()) } } ?? true
    }

    func run() throws {
        if ladspa { return listLADSPA() }
        let plugins = LV2World.shared.plugins.filter { matches($0.uri, $0.name) }
        if json {
            let list = plugins.map { p -> JSONValue in
                .object([
                    ("uri", .string(p.uri)), ("name", .string(p.name)),
                    ("audioInputs", .number(p.audioPorts(input: true).count)),
                    ("audioOutputs", .number(p.audioPorts(input: false).count)),
                    ("instrument", .bool(p.isInstrument)), ("midiProcessor", .bool(p.isMIDIProcessor)),
                    ("source", .bool(p.isSource)), ("sendsEvents", .bool(p.sendsEvents)),
                    ("traits", .array(p.descriptor.traits.names.map(JSONValue.string))),
                    (
                        "signalPorts",
                        .array(
                            p.signalPorts.map {
                                .object([
                                    ("index", .number($0.index)), ("symbol", .string($0.symbol)),
                                    ("kind", .string($0.kind.rawValue)),
                                    ("input", .bool($0.isInput)), ("sidechain", .bool($0.isSideChain)),
                                ])
                            })
                    ),
                    (
                        "controls",
                        .array(
                            p.controlInputs.map { c -> JSONValue in
                                let properties = [
                                    (c.isToggled, "toggled"), (c.isInteger, "integer"),
                                    (c.isEnumeration, "enumeration"),
                                    (c.isLogarithmic, "logarithmic"),
                                ].filter(\.0).map(\.1)
                                return .members([
                                    ("symbol", .string(c.symbol)), ("name", .string(c.name)),
                                    ("minimum", c.minimum.map(JSONValue.number)),
                                    ("maximum", c.maximum.map(JSONValue.number)),
                                    ("default", c.defaultValue.map(JSONValue.number)),
                                    ("boundsInSampleRates", c.boundsInSampleRates ? .bool(true) : nil),
                                    ("properties", properties.isEmpty ? nil : .array(properties.map(JSONValue.string))),
                                    (
                                        "scalePoints",
                                        c.scalePoints.isEmpty
                                            ? nil
                                            : .array(
                                                c.scalePoints.map {
                                                    .object([
                                                        ("label", .string($0.label)), ("value", .number($0.value)),
                                                    ])
                                                })
                                    ),
                                ])
                            })
                    ),
                    (
                        "requiredFeatures",
                        .array(
                            p.requiredFeatures.map {
                                .object([
                                    ("uri", .string($0)), ("supported", .bool(!p.unsupportedFeatures.contains($0))),
                                ])
                            })
                    ),
                    ("presets", .number(p.presets.count)), ("hardRTCapable", .bool(p.isHardRTCapable)),
                    (
                        "properties",
                        .array(
                            p.properties.map {
                                .object([
                                    ("symbol", .string($0.symbol)), ("uri", .string($0.uri)),
                                    ("label", .string($0.label)),
                                    ("range", .string($0.range ?? "")),
                                ])
                            })
                    ),
                ])
            }
            print(JSONValue.array(list).indented())
            return
        }
        for p in plugins {
            let inputs = p.audioPorts(input: true).count
            let outputs = p.audioPorts(input: false).count
            print("\(p.uri)\n  name: \(p.name)\n  audio: \(inputs) in, \(outputs) out")
            for port in p.signalPorts { print("  port \(port.description)") }
            for c in p.controlInputs { print("  control \(c.description)") }
            for property in p.properties { print("  property \(property.description)") }
            for f in p.requiredFeatures {
                print("  requires \(f)\(p.unsupportedFeatures.contains(f) ? " (not supported)" : "")")
            }
            if !p.isHardRTCapable {
                print("  not lv2:hardRTCapable: run() may block or allocate (live playback may drop out)")
            }
            print("  presets: \(p.presets.count)")
            print("  traits: \(p.descriptor.traits.names.joined(separator: ", "))")
        }
        if plugins.isEmpty { print("no LV2 plugins found in \(LV2World.shared.searchPath)") }
    }

    /// Each LADSPA plugin: unique id, label, name, library, ports (the control ports with their hints' ranges and
    /// defaults, by the symbols a `ladspa` node's `controls` take).
    func listLADSPA() {
        let libraries = LADSPALibraries.shared
        let (all, failures) = libraries.all
        let plugins = all.filter { matches($0.label, $0.name) }
        if json {
            let list = plugins.map { p -> JSONValue in
                .object([
                    ("uniqueID", .number(p.uniqueID)), ("label", .string(p.label)), ("name", .string(p.name)),
                    ("maker", .string(p.maker)), ("library", .string(p.library)),
                    ("audioInputs", .number(p.audioPorts(input: true).count)),
                    ("audioOutputs", .number(p.audioPorts(input: false).count)),
                    (
                        "controls",
                        .array(
                            p.at(sampleRate: 48000).controlInputs.map { c in
                                .members([
                                    ("symbol", .string(c.symbol)), ("name", .string(c.name)),
                                    ("minimum", c.minimum.map { .number(Double($0)) }),
                                    ("maximum", c.maximum.map { .number(Double($0)) }),
                                    ("default", c.defaultValue.map { .number(Double($0)) }),
                                    ("value", .number(Double(c.conform(c.defaultValue ?? c.minimum ?? 0)))),
                                ])
                            })
                    ),
                    ("hardRTCapable", .bool(p.isHardRTCapable)),
                ])
            }
            print(JSONValue.array(list).indented())
            return
        }
        for p in plugins {
            print("\(p.uniqueID) \(p.label)\n  name: \(p.name)\n  library: \(p.library)")
            for port in p.ports { print("  port \(port.description)") }
        }
        for failure in failures { printError("warning: \(failure)") }
        if plugins.isEmpty { print("no LADSPA plugins found in \(libraries.searchPath)") }
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
