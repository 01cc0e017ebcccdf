import FoundationEssentials
import Glibc

/// The graph's `midiControl`: a live MIDI input (`port`, opened by `run` as GRAPHNAME.PORT) whose control changes move
/// parameters and whose program changes select chains or presets.
public struct MIDIControlMap: Sendable, Equatable {
    /// How a controller's 0…127 becomes a parameter value between `min` and `max`.
    public enum Curve: String, Sendable, CaseIterable {
        /// Evenly spread.
        case linear
        /// Evenly spread in ratio (frequencies): min and max must be above 0.
        case log
        /// A fader for a linear gain: 127 is max, each step down 0.5 dB less, 0 is min (silence for a volume).
        case db
    }

    /// A control change bound to a parameter.
    public struct ControlMapping: Sendable, Equatable {
        /// 1…16; nil: any channel.
        public var channel: Int?
        public var controller: Int
        public var node: String
        public var parameter: ParameterID
        public var minimum: Double
        public var maximum: Double
        public var curve: Curve

        /// The parameter value for a controller value 0…127.
        public func value(_ cc: Int) -> Double {
            let x = Double(min(max(cc, 0), 127)) / 127
            switch curve {
            case .linear: return minimum + (maximum - minimum) * x
            case .log: return minimum * pow(maximum / minimum, x)
            case .db: return cc <= 0 ? minimum : minimum + (maximum - minimum) * pow(10, -0.5 * Double(127 - cc) / 20)
            }
        }
    }

    /// A program change that selects a chain for a chain node, or a preset for a node.
    public struct ProgramMapping: Sendable, Equatable {
        public var channel: Int?
        public var program: Int
        public var node: String
        public var chain: String?
        public var preset: String?

        /// The control line it sends.
        public var line: String { chain.map { "chain \(node) \($0)" } ?? "preset \(node) \(preset ?? "")" }
    }

    public var port: String
    public var controls: [ControlMapping] = []
    public var programs: [ProgramMapping] = []

    /// Reads `midiControl`, checking every mapping against the graph's nodes (their parameters and presets) and chains.
    static func parse(
        _ value: JSONValue, nodes: [GraphNode], chains: ChainDefinitions, chainNodes: [String],
        issues: inout GraphIssues
    ) -> MIDIControlMap? {
        guard value.objectMembers != nil else {
            issues.report(
                "midiControl",
                "expected an object like {\"port\": \"control\", \"cc\": "
                    + "[...], \"program\": [...]}, found \(value.typeName)",
                at: value)
            return nil
        }
        let top = NodeSettings(object: value, path: "midiControl")
        top.rejectUnknownKeys(["port", "cc", "program"], issues: &issues)
        guard let port = top.string("port", issues: &issues) else {
            if value["port"] == nil {
                issues.report(
                    "midiControl", "missing \"port\" (the name of the MIDI input, opened as GRAPHNAME.PORT)", at: value)
            }
            return nil
        }
        if !GraphDocument.isValidID(port) {
            issues.report(
                "midiControl.port", "'\(port)' is not a valid port name (non-empty, no ':', '/' or spaces)",
                at: value["port"])
        }
        var map = MIDIControlMap(port: port)
        for (i, item) in (value["cc"]?.arrayValue ?? []).enumerated() {
            let s = NodeSettings(object: item, path: "midiControl.cc[\(i)]")
            s.rejectUnknownKeys(["channel", "cc", "node", "param", "min", "max", "curve"], issues: &issues)
            let channel = s.integer("channel", in: 1...16, issues: &issues)
            guard let cc = s.integer("cc", in: 0...127, issues: &issues),
                let (node, info) = parameter(s, nodes: nodes, issues: &issues)
            else {
                if item["cc"] == nil {
                    issues.report(s.path, "missing \"cc\" (the controller number, 0…127)", at: item)
                }
                continue
            }
            var curve = Curve.linear
            if let name = s.string("curve", issues: &issues) {
                guard let c = Curve(rawValue: name) else {
                    issues.report(
                        s.path("curve"),
                        "unknown curve '\(name)'; curves: \(Curve.allCases.map(\.rawValue).joined(separator: ", "))",
                        at: item["curve"])
                    continue
                }
                curve = c
            }
            let range = info.minimum.isFinite && info.maximum.isFinite ? info.minimum...info.maximum : nil
            let low = s.number("min", in: range, issues: &issues) ?? info.minimum
            let high = s.number("max", in: range, issues: &issues) ?? info.maximum
            guard low.isFinite && high.isFinite else {
                issues.report(s.path, "'\(node).\(info.name)' has no bounded range; give \"min\" and \"max\"", at: item)
                continue
            }
            if curve == .log && (low <= 0 || high <= 0) {
                issues.report(
                    s.path("curve"),
                    "a log curve needs min and max above 0 (found \(Format.number(low))…\(Format.number(high)))",
                    at: item["curve"])
                continue
            }
            map.controls.append(
                ControlMapping(
                    channel: channel, controller: cc, node: node, parameter: info.id, minimum: low, maximum: high,
                    curve: curve))
        }
        for (i, item) in (value["program"]?.arrayValue ?? []).enumerated() {
            let s = NodeSettings(object: item, path: "midiControl.program[\(i)]")
            s.rejectUnknownKeys(["channel", "program", "node", "chain", "preset"], issues: &issues)
            let channel = s.integer("channel", in: 1...16, issues: &issues)
            guard let program = s.integer("program", in: 0...127, issues: &issues),
                let node = s.string("node", issues: &issues)
            else {
                issues.report(s.path, "a program mapping needs \"program\" (0…127) and \"node\"", at: item)
                continue
            }
            let chain = s.string("chain", issues: &issues)
            let preset = s.string("preset", issues: &issues)
            if let chain {
                guard chainNodes.contains(node) else {
                    issues.report(
                        s.path("node"),
                        "'\(node)' is not a chain node; chain nodes: "
                            + "\(chainNodes.isEmpty ? "none" : chainNodes.joined(separator: ", "))",
                        at: item["node"])
                    continue
                }
                guard chains.members[chain] != nil else {
                    issues.report(
                        s.path("chain"),
                        "no chain '\(chain)'; chains: \(chains.members.keys.sorted().joined(separator: ", "))",
                        at: item["chain"])
                    continue
                }
            } else if let preset {
                guard let definition = nodes.first(where: { $0.id == node })?.definition else {
                    issues.report(
                        s.path("node"), "no node '\(node)'; nodes: \(nodes.map(\.id).joined(separator: ", "))",
                        at: item["node"])
                    continue
                }
                guard definition.hasPreset(preset) else {
                    issues.report(s.path("preset"), "'\(node)' has no preset '\(preset)'", at: item["preset"])
                    continue
                }
            } else {
                issues.report(s.path, "a program mapping selects a \"chain\" or a \"preset\"", at: item)
                continue
            }
            map.programs.append(
                ProgramMapping(channel: channel, program: program, node: node, chain: chain, preset: preset))
        }
        return map
    }

    /// The node and parameter a mapping names, or nil (reported).
    static func parameter(_ s: NodeSettings, nodes: [GraphNode], issues: inout GraphIssues) -> (
        String, ParameterDescriptor
    )? {
        guard let node = s.string("node", issues: &issues), let name = s.string("param", issues: &issues) else {
            issues.report(s.path, "a control mapping needs \"node\" and \"param\"", at: s.object)
            return nil
        }
        guard let definition = nodes.first(where: { $0.id == node })?.definition else {
            issues.report(
                s.path("node"), "no node '\(node)'; nodes: \(nodes.map(\.id).joined(separator: ", "))",
                at: s.object["node"])
            return nil
        }
        let parameters = definition.descriptor.parameters
        guard let info = parameters.first(where: { $0.id == ParameterID(name) }) else {
            let names = parameters.map(\.name)
            issues.report(
                s.path("param"),
                "'\(node)' has no parameter '\(name)'; parameters: "
                    + "\(names.isEmpty ? "none" : names.joined(separator: ", "))",
                at: s.object["param"])
            return nil
        }
        return (node, info)
    }

    /// The map as the graph file writes it.
    public var json: JSONValue {
        func channel(_ c: Int?) -> [(key: String, value: JSONValue)] {
            c.map { [("channel", .number(Double($0)))] } ?? []
        }
        let cc = controls.map { m -> JSONValue in
            .object(
                channel(m.channel) + [
                    ("cc", .number(Double(m.controller))), ("node", .string(m.node)),
                    ("param", .string(m.parameter.description)),
                    ("min", .number(m.minimum)), ("max", .number(m.maximum)), ("curve", .string(m.curve.rawValue)),
                ])
        }
        let programs = programs.map { m -> JSONValue in
            .object(
                channel(m.channel) + [("program", .number(Double(m.program))), ("node", .string(m.node))]
                    + (m.chain.map { [("chain", JSONValue.string($0))] } ?? [])
                    + (m.preset.map { [("preset", JSONValue.string($0))] } ?? []))
        }
        return .object([("port", .string(port)), ("cc", .array(cc)), ("program", .array(programs))])
    }
}
